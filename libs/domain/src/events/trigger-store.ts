import { randomUUID } from 'node:crypto';
import type { Trigger, TriggerFireOutcome, TriggerFireView, TriggerPattern } from '@agent-platform/contracts';
import { StoreDuplicateError, type Store } from '@agent-platform/store';
import type { Clock } from '../time/clock.ts';

export const TRIGGERS_COLLECTION = 'triggers';
export const TRIGGER_FIRES_COLLECTION = 'trigger_fires';
/** How long a fire record (and so the claim of one event by one trigger) is kept. */
export const FIRE_RECORD_DAYS = 30;

export type TriggerRecord = Trigger;

export interface TriggerFireRecord extends TriggerFireView {
  /** `<trigger id>:<event id>`: the claim of the event by the trigger (one of each, ever). */
  id: string;
  trigger_id: string;
  expires_at: string;
  /**
   * While `running`: until when the worker firing it is known alive (it renews this); past it the
   * worker is presumed dead and a sweep records the fire lost. Absent on records written before.
   */
  lease_until?: string;
}

/** A `running` record written before fire leases is presumed lost this long after its claim. */
const LEGACY_RUNNING_MS = 3_600_000;

/** The error of a fire whose worker stopped between its claim and its end (docs/events.md "Triggers"). */
export const LOST_FIRE_ERROR =
  'lost: the worker handling this fire stopped before it finished; a fire is never retried (at most once), so the agent may not have been invoked';

/**
 * Triggers as stored (collection `triggers`) and their fire records (`trigger_fires`). The fire
 * record's id is the claim: inserting it is atomic in every store adapter, so of any number of
 * matchers seeing one event (a redelivery, two consumers) exactly one goes on to fire.
 */
export interface TriggerStore {
  insert(input: { agent_id: string; pattern: TriggerPattern; prompt_template: string; max_fires: number }): Promise<TriggerRecord>;
  get(id: string): Promise<TriggerRecord | null>;
  /** Oldest first; every agent's, or one agent's. */
  list(agentId?: string): Promise<TriggerRecord[]>;
  delete(id: string): Promise<boolean>;
  /** Removes every trigger of an agent (its uninstall) with their fire records; returns how many. */
  deleteForAgent(agentId: string): Promise<number>;
  /**
   * Takes one fire if any is left: `fires_count` + 1 unless `max_fires` (> 0) is reached, as one
   * atomic update of the trigger document, so the cap holds across processes. `taken` false: no
   * fire left (or the trigger is gone, `trigger` null).
   */
  takeFire(id: string): Promise<{ taken: boolean; trigger: TriggerRecord | null }>;
  /**
   * Inserts the fire record `<trigger>:<event>`; false when it exists (the event was handled).
   * `leaseMs`: a `running` claim's lease, renewed by `renew` while the fire goes on.
   */
  claim(fire: Omit<TriggerFireRecord, 'id' | 'expires_at' | 'at' | 'finished_at' | 'error' | 'lease_until'> & { error?: string | null }, leaseMs?: number): Promise<boolean>;
  /** Extends a `running` fire's lease; false when it is no longer running (finished, or swept as lost). */
  renew(triggerId: string, eventId: string, leaseMs: number): Promise<boolean>;
  finish(triggerId: string, eventId: string, outcome: TriggerFireOutcome, error?: string | null): Promise<void>;
  /** Records every `running` fire whose lease lapsed (its worker died) `failed` with LOST_FIRE_ERROR; returns how many. */
  sweepLost(): Promise<number>;
  /** Newest first. */
  fires(triggerId: string, limit: number): Promise<TriggerFireRecord[]>;
}

export function fireRecordId(triggerId: string, eventId: string): string {
  return `${triggerId}:${eventId}`;
}

export function createTriggerStore(store: Store, clock: Clock): TriggerStore {
  const triggers = store.collection<TriggerRecord>(TRIGGERS_COLLECTION, { indexes: [{ field: 'agent_id' }, { field: 'created_at' }], readMostly: true });
  const fires = store.collection<TriggerFireRecord>(TRIGGER_FIRES_COLLECTION, {
    indexes: [{ field: 'trigger_id' }, { field: 'at' }, { field: 'outcome' }],
    ttlField: 'expires_at',
  });
  const now = (): string => clock.now().toISOString();

  return {
    async insert(input) {
      const record: TriggerRecord = { id: randomUUID(), ...input, fires_count: 0, created_at: now() };
      return (await triggers.insert(record)).doc;
    },
    async get(id) {
      return (await triggers.get(id))?.doc ?? null;
    },
    async list(agentId) {
      const rows = await triggers.find({ ...(agentId === undefined ? {} : { where: { agent_id: agentId } }), orderBy: { field: 'created_at' } });
      return rows.map(({ doc }) => doc);
    },
    async delete(id) {
      return triggers.delete(id);
    },
    async deleteForAgent(agentId) {
      const rows = await triggers.find({ where: { agent_id: agentId } });
      for (const { doc } of rows) {
        await triggers.delete(doc.id);
        for (const fire of await fires.find({ where: { trigger_id: doc.id } })) await fires.delete(fire.doc.id);
      }
      return rows.length;
    },
    async takeFire(id) {
      // `change` may run more than once (a writer got there first): the last run decided.
      let taken = false;
      const after = await triggers.update(id, (current) => {
        taken = false;
        if (current === null) return null;
        const doc = current.doc;
        if (doc.max_fires > 0 && doc.fires_count >= doc.max_fires) return null;
        taken = true;
        return { ...doc, fires_count: doc.fires_count + 1 };
      });
      return { taken: taken && after !== null, trigger: after?.doc ?? null };
    },
    async claim(fire, leaseMs) {
      const at = now();
      const expires = new Date(clock.now().getTime() + FIRE_RECORD_DAYS * 86_400_000).toISOString();
      const lease = leaseMs === undefined ? {} : { lease_until: new Date(clock.now().getTime() + leaseMs).toISOString() };
      try {
        await fires.insert({ ...fire, ...lease, id: fireRecordId(fire.trigger_id, fire.event_id), at, finished_at: null, error: fire.error ?? null, expires_at: expires });
        return true;
      } catch (error) {
        if (error instanceof StoreDuplicateError) return false;
        throw error;
      }
    },
    async finish(triggerId, eventId, outcome, error = null) {
      const finishedAt = now();
      await fires.update(fireRecordId(triggerId, eventId), (current) =>
        current === null ? null : { ...current.doc, outcome, error, finished_at: finishedAt },
      );
    },
    async renew(triggerId, eventId, leaseMs) {
      const until = new Date(clock.now().getTime() + leaseMs).toISOString();
      let renewed = false;
      await fires.update(fireRecordId(triggerId, eventId), (current) => {
        renewed = current?.doc.outcome === 'running';
        return renewed && current !== null ? { ...current.doc, lease_until: until } : null;
      });
      return renewed;
    },
    async sweepLost() {
      const at = clock.now().getTime();
      const lapsed = (doc: TriggerFireRecord): boolean =>
        doc.outcome === 'running' && (doc.lease_until === undefined ? Date.parse(doc.at) + LEGACY_RUNNING_MS : Date.parse(doc.lease_until)) < at;
      let swept = 0;
      for (const { doc } of await fires.find({ where: { outcome: 'running' } })) {
        if (!lapsed(doc)) continue;
        // Checked again inside the update: the firing worker may have renewed or finished meanwhile.
        let lost = false;
        await fires.update(doc.id, (current) => {
          lost = current !== null && lapsed(current.doc);
          return lost && current !== null ? { ...current.doc, outcome: 'failed', error: LOST_FIRE_ERROR, finished_at: now() } : null;
        });
        if (lost) swept += 1;
      }
      return swept;
    },
    async fires(triggerId, limit) {
      const rows = await fires.find({ where: { trigger_id: triggerId }, orderBy: { field: 'at', direction: 'desc' }, limit });
      return rows.map(({ doc }) => doc);
    },
  };
}

/** A fire record as the API shows it. */
export function fireView(record: TriggerFireRecord): TriggerFireView {
  return {
    event_id: record.event_id,
    event_kind: record.event_kind,
    outcome: record.outcome,
    at: record.at,
    finished_at: record.finished_at,
    error: record.error,
  };
}
