import type { FireOutcome, PlatformConfig } from '@agent-platform/contracts';
import { latestSlot } from '@agent-platform/queue';
import type { Collection } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import type { Clock } from '../time/clock.ts';
import { repeatOf, scheduleSpec, withNextRun, type CronJobRecord } from './cron-job-record.ts';
import { agentRefusal, fireReason } from './fire-outcome.ts';
import { slotFireId, type FireLog } from './fire-log.ts';
import { scheduleExpression } from './schedule-registrar.ts';
import { slotsBetween, type SlotSpan } from './slot-count.ts';

/** A slot the queue handed to a scheduler: a slot job, or the scheduler's own retry of one. */
export interface SlotDelivery {
  schedule_id: string;
  slot_at: string;
  /** True for a retry job (the slot's fire failed before and was already claimed). */
  retry: boolean;
  /**
   * How long the fire holds off overlapping slots unless renewed (`renew`): a scheduler that dies
   * mid-fire stops renewing, so the job is not blocked for longer than this.
   */
  leaseMs: number;
  /** The scheduler process taking the slot (`host:pid`), kept on the slot's entry for operators. */
  by?: string;
}

/** What the scheduler does with a slot. Every kind but `orphan` has been recorded in the fire log. */
export type FireDecision =
  | {
      kind: 'fire';
      /** The slot fired: the delivered one, or a later one when catching up (docs/schedules.md). */
      slot_at: string;
      agent_id: string;
      message: string;
      /** What the invocation's `Cron` source shows as `expression`. */
      expression: string;
      late_ms: number;
      /** Slots newly counted missed. */
      missed: number;
    }
  | { kind: 'recorded'; outcome: FireOutcome; reason: string | null; missed: number }
  /** No job has this id (deleted): the caller removes its scheduler from the queue. */
  | { kind: 'orphan'; missed: 0 };

/** The end of a fire the scheduler sent. */
export interface FireResult {
  outcome: 'fired' | 'duplicate' | 'refused' | 'failed';
  reason: string | null;
  attempts: number;
}

/**
 * The scheduler's side of a job (docs/schedules.md "Firing"). The queue fires each slot once;
 * this adds, on the store every scheduler shares:
 * - a claim per slot (the slot's own fire-log entry), so a slot delivered twice fires once;
 * - catch-up: a slot found due later than `[schedules] catchup_window_secs` is not fired; when a
 *   later slot is within the window that one fires instead (once), and the rest are counted missed;
 * - missed slots: the slots between the last one handled and this one never fired;
 * - the overlap policy: with `skip`, a slot that comes while the previous fire runs is skipped;
 * - D9: a fire at an unknown or Suspended agent is refused and recorded, never dropped silently.
 */
export interface ScheduleFiring {
  begin(delivery: SlotDelivery): Promise<FireDecision>;
  /** The fire still runs: its overlap lease is extended to `leaseMs` from now (a heartbeat). */
  renew(scheduleId: string, slotAt: string, leaseMs: number): Promise<void>;
  /** A fire failed and will be retried: the entry counts the attempt, the overlap lease is extended. */
  retrying(
    scheduleId: string,
    slotAt: string,
    attempts: number,
    reason: string,
    leaseMs: number,
  ): Promise<void>;
  finish(scheduleId: string, slotAt: string, result: FireResult): Promise<void>;
}

export interface ScheduleFiringDeps {
  jobs: Collection<CronJobRecord>;
  log: FireLog;
  agents: Pick<AgentStore, 'get'>;
  clock: Clock;
  settings: () => PlatformConfig['schedules'];
}

const iso = (ms: number): string => new Date(ms).toISOString();
const NO_GAP: SlotSpan = { count: 0, capped: false, first: null, last: null };

export function createScheduleFiring(deps: ScheduleFiringDeps): ScheduleFiring {
  const { jobs, log } = deps;

  /** The record after `change`, or null when the job was deleted meanwhile. */
  async function updateJob(
    id: string,
    change: (record: CronJobRecord) => CronJobRecord,
  ): Promise<CronJobRecord | null> {
    return (await jobs.update(id, (current) => (current === null ? null : change(current.doc))))?.doc ?? null;
  }

  /** Moves the cursor to `slotMs` and counts the slots skipped since (`recordGap` logs them as one `missed` entry). */
  function advance(
    record: CronJobRecord,
    slotMs: number,
    nowIso: string,
  ): { next: CronJobRecord; gap: SlotSpan } {
    const cursor = Date.parse(record.slot_cursor);
    const gap = slotMs > cursor ? slotsBetween(record.schedule, cursor, slotMs) : NO_GAP;
    const last = record.last_slot === null ? slotMs : Math.max(Date.parse(record.last_slot), slotMs);
    return {
      gap,
      next: withNextRun({
        ...record,
        slot_cursor: iso(Math.max(cursor, slotMs)),
        last_slot: iso(last),
        missed_slots: record.missed_slots + gap.count,
        updated_at: nowIso,
      }),
    };
  }

  async function recordGap(record: CronJobRecord, gap: SlotSpan): Promise<void> {
    if (gap.count === 0 || gap.first === null || gap.last === null) return;
    await log.add({
      schedule_id: record.id,
      agent_id: record.agent_id,
      slot_at: iso(gap.first),
      outcome: 'missed',
      missed_count: gap.count,
      missed_until: iso(gap.last),
      reason: `no scheduler fired these slots (it was down or fell behind)${gap.capped ? '; counting stopped at this many' : ''}`,
    });
  }

  /** A slot of a paused job: recorded beside the slot (an `at` job resumed later still fires its slot). */
  async function paused(record: CronJobRecord, slotMs: number): Promise<FireDecision> {
    const reason = 'the job was paused when this slot came';
    const nowIso = deps.clock.now().toISOString();
    await log.add({
      schedule_id: record.id,
      agent_id: record.agent_id,
      slot_at: iso(slotMs),
      outcome: 'skipped_paused',
      reason,
      finished_at: nowIso,
    });
    return { kind: 'recorded', outcome: 'skipped_paused', reason, missed: 0 };
  }

  /** A slot found too late: missed, on its own entry (unless already handled) and on the record. */
  async function missed(record: CronJobRecord, slotMs: number, reason: string): Promise<FireDecision> {
    const nowIso = deps.clock.now().toISOString();
    const slotAt = iso(slotMs);
    const base = { schedule_id: record.id, agent_id: record.agent_id, slot_at: slotAt };
    const existing = await log.claim({
      ...base,
      outcome: 'missed',
      reason,
      finished_at: nowIso,
      missed_count: 1,
      missed_until: slotAt,
    });
    if (existing !== null) return duplicate(record, slotAt, existing.outcome);
    const seen = { gap: NO_GAP };
    await updateJob(record.id, (current) => {
      const advanced = advance(current, slotMs, nowIso);
      seen.gap = advanced.gap;
      return { ...advanced.next, missed_slots: advanced.next.missed_slots + 1 };
    });
    await recordGap(record, seen.gap);
    return { kind: 'recorded', outcome: 'missed', reason, missed: seen.gap.count + 1 };
  }

  async function duplicate(record: CronJobRecord, slotAt: string, was: FireOutcome): Promise<FireDecision> {
    const reason = `slot already handled (${was})`;
    await log.add({
      schedule_id: record.id,
      agent_id: record.agent_id,
      slot_at: slotAt,
      outcome: 'duplicate',
      reason,
      finished_at: deps.clock.now().toISOString(),
    });
    return { kind: 'recorded', outcome: 'duplicate', reason, missed: 0 };
  }

  function fire(record: CronJobRecord, slotMs: number, lateMs: number, missed: number): FireDecision {
    const expression = scheduleExpression(scheduleSpec(record.schedule));
    return {
      kind: 'fire',
      slot_at: iso(slotMs),
      agent_id: record.agent_id,
      message: record.action.message,
      expression,
      late_ms: lateMs,
      missed,
    };
  }

  /**
   * A slot delivered again while its claim is still `running`: the job of a scheduler that died
   * mid-fire, run again by the queue. It fires again under the same idempotency key, so the agent
   * runs at most once for the slot (the worker answers DuplicateInvocation if it already ran), and
   * the claim gets its outcome. Even for a job paused since: the slot came while it was enabled.
   */
  async function refire(
    record: CronJobRecord,
    slotMs: number,
    lateMs: number,
    delivery: SlotDelivery,
  ): Promise<FireDecision> {
    const nowIso = deps.clock.now().toISOString();
    const running = { slot_at: iso(slotMs), until: iso(deps.clock.now().getTime() + delivery.leaseMs) };
    await log.change(slotFireId(record.id, iso(slotMs)), { taken_by: delivery.by ?? null });
    const current = await updateJob(record.id, (r) => ({ ...r, running, updated_at: nowIso }));
    return current === null ? { kind: 'orphan', missed: 0 } : fire(current, slotMs, Math.max(0, lateMs), 0);
  }

  async function claimAndFire(
    record: CronJobRecord,
    slotMs: number,
    lateMs: number,
    delivery: SlotDelivery,
  ): Promise<FireDecision> {
    const now = deps.clock.now();
    const nowIso = now.toISOString();
    const slotAt = iso(slotMs);
    const existing = await log.claim({
      schedule_id: record.id,
      agent_id: record.agent_id,
      slot_at: slotAt,
      outcome: 'running',
      late_ms: lateMs,
      attempts: 1,
      taken_by: delivery.by ?? null,
    });
    const running = { slot_at: slotAt, until: iso(now.getTime() + delivery.leaseMs) };
    if (existing !== null) {
      if (existing.outcome !== 'running') return duplicate(record, slotAt, existing.outcome);
      return refire(record, slotMs, lateMs, delivery);
    }
    const refusal = agentRefusal(await deps.agents.get(record.agent_id), record.agent_id);
    // Decided inside the update (which may run more than once): the last run's decision holds.
    const seen: { gap: SlotSpan; overlapping: string | null } = { gap: NO_GAP, overlapping: null };
    const current = await updateJob(record.id, (r) => {
      const advanced = advance(r, slotMs, nowIso);
      seen.gap = advanced.gap;
      const other =
        r.running !== null && r.running.slot_at !== slotAt && Date.parse(r.running.until) > now.getTime()
          ? r.running.slot_at
          : null;
      seen.overlapping = refusal === null && r.overlap === 'skip' ? other : null;
      if (refusal !== null || seen.overlapping !== null) return advanced.next;
      return { ...advanced.next, running, last_run: nowIso };
    });
    const { gap, overlapping } = seen;
    if (current === null) {
      await log.change(slotFireId(record.id, slotAt), {
        outcome: 'skipped_paused',
        reason: 'the job was deleted',
        finished_at: nowIso,
        attempts: 0,
      });
      return { kind: 'orphan', missed: 0 };
    }
    await recordGap(current, gap);
    if (refusal !== null) {
      const reason = fireReason(refusal.category, refusal.message);
      await log.change(slotFireId(record.id, slotAt), {
        outcome: 'refused',
        reason,
        finished_at: nowIso,
        attempts: 0,
        late_ms: null,
      });
      return { kind: 'recorded', outcome: 'refused', reason, missed: gap.count };
    }
    if (overlapping !== null) {
      const reason = `the fire of slot ${overlapping} is still running (overlap policy skip)`;
      await log.change(slotFireId(record.id, slotAt), {
        outcome: 'skipped_overlap',
        reason,
        finished_at: nowIso,
        attempts: 0,
        late_ms: null,
      });
      return { kind: 'recorded', outcome: 'skipped_overlap', reason, missed: gap.count };
    }
    return fire(current, slotMs, lateMs, gap.count);
  }

  async function renew(scheduleId: string, slotAt: string, leaseMs: number): Promise<void> {
    const until = iso(deps.clock.now().getTime() + leaseMs);
    await updateJob(scheduleId, (r) =>
      r.running?.slot_at === slotAt ? { ...r, running: { slot_at: slotAt, until } } : r,
    );
  }

  return {
    async begin(delivery) {
      const record = (await jobs.get(delivery.schedule_id))?.doc ?? null;
      if (record === null) return { kind: 'orphan', missed: 0 };
      const now = deps.clock.now().getTime();
      const slotMs = Date.parse(delivery.slot_at);
      if (delivery.retry) return retry(record, slotMs, delivery);
      const claim = await log.get(slotFireId(record.id, iso(slotMs)));
      if (claim?.outcome === 'running' && claim.trigger === 'schedule')
        return refire(record, slotMs, now - slotMs, delivery);
      const enabledAt = Date.parse(record.enabled_at);
      if (!record.enabled || (slotMs < enabledAt && record.schedule.kind !== 'at')) {
        return paused(record, slotMs);
      }
      // An `at` slot that passed before the job was (re-)enabled became due at the enabling.
      const lateMs = now - Math.max(slotMs, enabledAt);
      const windowMs = deps.settings().catchup_window_secs * 1000;
      if (lateMs <= windowMs) return claimAndFire(record, slotMs, Math.max(0, lateMs), delivery);
      // Found too late (the scheduler was down): the latest slot still within the window fires
      // instead, once; this one and those before it are counted missed.
      const latest = latestSlot(repeatOf(record.schedule), slotMs, now);
      if (latest > slotMs && now - latest <= windowMs)
        return claimAndFire(record, latest, now - latest, delivery);
      return missed(
        record,
        slotMs,
        `found ${Math.round(lateMs / 1000)} s after its time, beyond [schedules] catchup_window_secs`,
      );
    },

    renew,

    async retrying(scheduleId, slotAt, attempts, reason, leaseMs) {
      await log.change(slotFireId(scheduleId, slotAt), { attempts, reason });
      await renew(scheduleId, slotAt, leaseMs);
    },

    async finish(scheduleId, slotAt, result) {
      const nowIso = deps.clock.now().toISOString();
      await log.change(slotFireId(scheduleId, slotAt), {
        outcome: result.outcome,
        reason: result.reason,
        attempts: result.attempts,
        finished_at: nowIso,
      });
      await updateJob(scheduleId, (r) =>
        r.running?.slot_at === slotAt ? { ...r, running: null, updated_at: nowIso } : r,
      );
    },
  };

  /**
   * A retry job: the slot is claimed already; a job paused meanwhile stops retrying. Unless the
   * scheduler that took the slot job died before claiming it (the queue's `onLost` retried it):
   * then the slot has no entry, and it is claimed now as an on-time slot would have been, so it
   * fires with its own entry (a later slot may already have counted it missed: the documented
   * inexactness of docs/schedules.md "Catch-up after downtime"), or is recorded skipped when paused.
   */
  async function retry(record: CronJobRecord, slotMs: number, delivery: SlotDelivery): Promise<FireDecision> {
    const leaseMs = delivery.leaseMs;
    const nowIso = deps.clock.now().toISOString();
    const slotAt = iso(slotMs);
    if ((await log.get(slotFireId(record.id, slotAt))) === null) {
      if (!record.enabled) return paused(record, slotMs);
      return claimAndFire(record, slotMs, Math.max(0, deps.clock.now().getTime() - slotMs), delivery);
    }
    if (!record.enabled) {
      const reason = 'the job was paused while its fire was being retried';
      await log.change(slotFireId(record.id, slotAt), {
        outcome: 'skipped_paused',
        reason,
        finished_at: nowIso,
      });
      await updateJob(record.id, (r) => (r.running?.slot_at === slotAt ? { ...r, running: null } : r));
      return { kind: 'recorded', outcome: 'skipped_paused', reason, missed: 0 };
    }
    // The scheduler making this attempt (the one that took the slot may have died: onLost retries it).
    if (delivery.by !== undefined) await log.change(slotFireId(record.id, slotAt), { taken_by: delivery.by });
    const until = iso(deps.clock.now().getTime() + leaseMs);
    const current = await updateJob(record.id, (r) => ({
      ...r,
      running: { slot_at: slotAt, until },
      last_run: nowIso,
      updated_at: nowIso,
    }));
    return current === null
      ? { kind: 'orphan', missed: 0 }
      : fire(current, slotMs, deps.clock.now().getTime() - slotMs, 0);
  }
}
