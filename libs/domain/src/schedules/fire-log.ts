import { randomUUID } from 'node:crypto';
import type { ScheduleFireView } from '@agent-platform/contracts';
import { StoreDuplicateError, type Store } from '@agent-platform/store';
import type { Clock } from '../time/clock.ts';

/** What became of each slot of each job: collection `cron_fires`, entries expire after `[schedules] fire_history_days`. */
export const CRON_FIRES_COLLECTION = 'cron_fires';

export interface FireRecord extends ScheduleFireView {
  /** `<schedule id>:<slot>` for the slot's own entry (its claim, see `claim`); a UUID for the others. */
  id: string;
  schedule_id: string;
  agent_id: string;
  /** The scheduler process (`host:pid`) that took the slot; null for manual runs and records beside a slot. Not on the wire. */
  taken_by: string | null;
  expires_at: string;
}

/** The fields a new entry needs; the rest default (no attempt, nothing missed, no reason). */
export type NewFire = Pick<FireRecord, 'schedule_id' | 'agent_id' | 'slot_at' | 'outcome'> &
  Partial<Omit<FireRecord, 'id' | 'expires_at'>>;

export type FireChange = Partial<
  Pick<FireRecord, 'outcome' | 'finished_at' | 'late_ms' | 'attempts' | 'reason' | 'taken_by'>
>;

/**
 * The fire log. A slot's own entry doubles as its claim: inserting `<schedule id>:<slot>` is
 * atomic in every store adapter, so across any number of scheduler processes one of them owns a
 * slot; the others find the entry and record a `duplicate` beside it.
 */
export interface FireLog {
  /** Inserts the slot's own entry; `null` when this process owns the slot now, else the entry that was there. */
  claim(fire: NewFire): Promise<FireRecord | null>;
  get(id: string): Promise<FireRecord | null>;
  /** Changes an entry (a slot's own entry: `slotFireId`) as the fire goes on. */
  change(id: string, change: FireChange): Promise<void>;
  /** An entry beside the slots' own ones: a duplicate delivery, a manual run, a span of missed slots. */
  add(fire: NewFire): Promise<FireRecord>;
  /** Newest first. */
  list(scheduleId: string, limit: number): Promise<FireRecord[]>;
}

export function slotFireId(scheduleId: string, slotAt: string): string {
  return `${scheduleId}:${slotAt}`;
}

export function createFireLog(store: Store, clock: Clock, historyDays: () => number): FireLog {
  const fires = store.collection<FireRecord>(CRON_FIRES_COLLECTION, {
    indexes: [{ field: 'schedule_id' }, { field: 'recorded_at' }],
    ttlField: 'expires_at',
  });

  const entry = (id: string, fire: NewFire): FireRecord => {
    const now = clock.now();
    return {
      id,
      trigger: 'schedule',
      recorded_at: now.toISOString(),
      finished_at: null,
      late_ms: null,
      attempts: 0,
      missed_count: 0,
      missed_until: null,
      reason: null,
      taken_by: null,
      ...fire,
      expires_at: new Date(now.getTime() + historyDays() * 86_400_000).toISOString(),
    };
  };

  return {
    async claim(fire) {
      const id = slotFireId(fire.schedule_id, fire.slot_at);
      try {
        await fires.insert(entry(id, fire));
        return null;
      } catch (error) {
        if (!(error instanceof StoreDuplicateError)) throw error;
        const existing = await fires.get(id);
        // Gone between the two calls only if it expired: then it was long done.
        return existing?.doc ?? entry(id, { ...fire, outcome: 'fired' });
      }
    },
    async get(id) {
      return (await fires.get(id))?.doc ?? null;
    },
    async change(id, change) {
      await fires.update(id, (current) => (current === null ? null : { ...current.doc, ...change }));
    },
    async add(fire) {
      return (await fires.insert(entry(randomUUID(), fire))).doc;
    },
    async list(scheduleId, limit) {
      const rows = await fires.find({
        where: { schedule_id: scheduleId },
        orderBy: { field: 'recorded_at', direction: 'desc' },
        limit,
      });
      return rows.map(({ doc }) => doc);
    },
  };
}

/** The wire view of an entry (GET /schedules/{id}/fires). */
export function toFireView(fire: FireRecord): ScheduleFireView {
  return {
    slot_at: fire.slot_at,
    trigger: fire.trigger,
    outcome: fire.outcome,
    recorded_at: fire.recorded_at,
    finished_at: fire.finished_at,
    late_ms: fire.late_ms,
    attempts: fire.attempts,
    missed_count: fire.missed_count,
    missed_until: fire.missed_until,
    reason: fire.reason,
  };
}
