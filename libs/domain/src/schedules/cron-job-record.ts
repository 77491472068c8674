import type {
  CronJob,
  CronJobAction,
  CronJobSchedule,
  OverlapPolicy,
  ScheduleSpec,
} from '@agent-platform/contracts';
import { slotAfter, type Repeat } from '@agent-platform/queue';
import type { Store } from '@agent-platform/store';
import { toRepeat, type ScheduleRegistration } from './schedule-registrar.ts';

/** One store for schedules and cron jobs (spec §Resources "CronJob"): collection `cron_jobs`. */
export const CRON_JOBS_COLLECTION = 'cron_jobs';

/**
 * A CronJob as stored: the spec's fields, plus what firing needs. Every field past `next_run`
 * is ours and never leaves the api except through GET /schedules/{id}/fires.
 */
export interface CronJobRecord extends CronJob {
  /** Slots of this job that come while its previous fire still runs: skipped (default) or fired. */
  overlap: OverlapPolicy;
  /**
   * When the job was created or last enabled. A cron or `every` slot before it came while the
   * job was paused (a job queued before the pause) and is skipped; an `at` slot before it fires,
   * late, with its lateness counted from here.
   */
  enabled_at: string;
  /**
   * Missed-slot counting starts after this instant: a slot after it and before a slot that is
   * handled never fired, so it is counted missed. Starts at `enabled_at` and moves forward to
   * each slot handled, so the slots of a paused job are never counted missed.
   */
  slot_cursor: string;
  /** The latest slot handled (fired, refused, skipped or missed); an `at` job is spent once it is its `at`. */
  last_slot: string | null;
  /** The fire in progress, for the overlap policy: until its end, or `until` (a crashed scheduler's lease). */
  running: { slot_at: string; until: string } | null;
  /** Slots missed in total. */
  missed_slots: number;
  updated_at: string;
}

export function cronJobs(store: Store) {
  return store.collection<CronJobRecord>(CRON_JOBS_COLLECTION, {
    indexes: [{ field: 'agent_id' }, { field: 'created_at' }],
  });
}

/** The spec's `schedule` as the queue port's registrar takes it. */
export function scheduleSpec(schedule: CronJobSchedule): ScheduleSpec {
  return schedule.kind === 'cron' ? { kind: 'cron', expr: schedule.expr, tz: schedule.tz } : schedule;
}

/** What the registrar puts on the queue for a record. */
export function registrationOf(record: CronJobRecord): ScheduleRegistration {
  return {
    id: record.id,
    agent_id: record.agent_id,
    schedule: scheduleSpec(record.schedule),
    message: record.action.message,
  };
}

export function repeatOf(schedule: CronJobSchedule): Repeat {
  return toRepeat(scheduleSpec(schedule));
}

export function agentTurn(message: string): CronJobAction {
  return { kind: 'agent_turn', message, model_override: null, timeout_secs: null };
}

/** True for an `at` job whose one slot has been handled: nothing is left to fire. */
export function isSpent(record: CronJobRecord): boolean {
  return (
    record.schedule.kind === 'at' &&
    record.last_slot !== null &&
    Date.parse(record.last_slot) >= Date.parse(record.schedule.at)
  );
}

/**
 * The next slot, from the schedule (not from a stored value that a downtime would leave stale):
 * null while disabled and for a spent `at` job. An `at` whose time passed while it was due still
 * shows its time: it fires at the next poll.
 */
export function nextRun(record: CronJobRecord, now: Date): string | null {
  if (!record.enabled || isSpent(record)) return null;
  if (record.schedule.kind === 'at') return new Date(record.schedule.at).toISOString();
  const next = slotAfter(repeatOf(record.schedule), now.getTime());
  return next === null ? null : new Date(next).toISOString();
}

/** The record with its stored `next_run` brought up to date as of its `updated_at` (views compute it afresh anyway). */
export function withNextRun(record: CronJobRecord): CronJobRecord {
  return { ...record, next_run: nextRun(record, new Date(record.updated_at)) };
}

/** The spec's CronJob view of a record, exactly its fields. */
export function toCronJob(record: CronJobRecord, now: Date): CronJob {
  return {
    id: record.id,
    agent_id: record.agent_id,
    name: record.name,
    enabled: record.enabled,
    schedule: record.schedule,
    action: record.action,
    created_at: record.created_at,
    last_run: record.last_run,
    next_run: nextRun(record, now),
  };
}
