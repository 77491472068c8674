import { summarizeLatencies } from './latency.ts';
import type { LoadResult } from './target.ts';

// The arithmetic of the schedule targets (bench/schedule-fleet.ts gathers the evidence): which
// slots of a window were due, which reached the agent workers, how often and how late, and how
// that maps into the report's LoadResult. Pure, so that the counting is unit-tested.

/** One `agents.invoke` with a `Cron` source, as the bench's own subscription on the subject saw it. */
export interface Delivery {
  schedule_id: string;
  /** The slot (`source.Cron.scheduled_at`), ISO. */
  slot_at: string;
  /** When the bench received it, ms since the epoch. */
  at: number;
}

/** The worker's idempotency record of a slot (`cron:<schedule id>:<slot>`): the agent ran it once it is `done`. */
export interface SlotRun {
  schedule_id: string;
  slot_at: string;
  done: boolean;
  /** When the worker claimed the key (started the invocation), ms since the epoch. */
  claimed_at: number;
}

/** An entry of the fire log (the scheduler's own word). */
export interface LoggedFire {
  schedule_id: string;
  slot_at: string;
  outcome: string;
  late_ms: number | null;
  missed_count: number;
  /** When the scheduler claimed the slot and when its fire ended (ISO): how long the fire held the scheduler. */
  recorded_at: string;
  finished_at: string | null;
}

/** A schedule of the run: its slots are `offsetMs` past each multiple of the period since the epoch. */
export interface ScheduledJob {
  id: string;
  /** 0 for `every_secs` (docs/schedules.md); the seconds field of a spread cron expression otherwise. */
  offsetMs: number;
}

export interface ScheduleWindow {
  schedules: ScheduledJob[];
  everyMs: number;
  /** Slots in [startMs, endMs) were due, for every schedule. */
  startMs: number;
  endMs: number;
}

/** The slots of the window at `offsetMs` past each multiple of the period. */
export function slotsIn(
  window: Pick<ScheduleWindow, 'everyMs' | 'startMs' | 'endMs'>,
  offsetMs = 0,
): number[] {
  const { everyMs, startMs, endMs } = window;
  const slots: number[] = [];
  for (let t = Math.ceil((startMs - offsetMs) / everyMs) * everyMs + offsetMs; t < endMs; t += everyMs)
    slots.push(t);
  return slots;
}

const slotKey = (scheduleId: string, slotMs: number) => `${scheduleId}@${slotMs}`;

/**
 * Counts of one window. From the bus (what the agent workers received): `fired` distinct due
 * slots delivered, `duplicates` deliveries beyond a slot's first, `missed` due slots never
 * delivered, lateness of each slot's first delivery. From the workers' idempotency records:
 * `ran` due slots the agent finished. From the fire log: its outcomes for the due slots.
 */
export function scheduleStats(
  window: ScheduleWindow,
  deliveries: Delivery[],
  runs: SlotRun[],
  fires: LoggedFire[],
) {
  const ids = new Set(window.schedules.map((s) => s.id));
  const due = new Set(
    window.schedules.flatMap(({ id, offsetMs }) => slotsIn(window, offsetMs).map((s) => slotKey(id, s))),
  );
  const inWindow = (d: { schedule_id: string; slot_at: string }) =>
    due.has(slotKey(d.schedule_id, Date.parse(d.slot_at)));

  const first = new Map<string, number>();
  let duplicates = 0;
  for (const d of deliveries.filter(inWindow).sort((a, b) => a.at - b.at)) {
    const key = slotKey(d.schedule_id, Date.parse(d.slot_at));
    if (first.has(key)) duplicates++;
    else first.set(key, d.at - Date.parse(d.slot_at));
  }
  const ran = runs.filter((r) => r.done && inWindow(r));
  const logged = fires.filter((f) => ids.has(f.schedule_id));
  const outcome = (name: string) => logged.filter((f) => f.outcome === name && inWindow(f)).length;
  // A `missed` entry spans slots (`missed_count` from `slot_at`): counted when its first slot is due in the window.
  const loggedMissed = logged
    .filter((f) => f.outcome === 'missed' && inWindow(f))
    .reduce((n, f) => n + f.missed_count, 0);
  const loggedFired = logged.filter((f) => f.outcome === 'fired' && inWindow(f));
  const loggedLate = loggedFired.filter((f) => f.late_ms !== null).map((f) => f.late_ms!);
  const held = loggedFired
    .filter((f) => f.finished_at !== null)
    .map((f) => Date.parse(f.finished_at!) - Date.parse(f.recorded_at));
  return {
    expected: due.size,
    fired: first.size,
    duplicates,
    missed: due.size - first.size,
    lateMs: [...first.values()],
    ran: ran.length,
    runStartLateMs: ran.map((r) => r.claimed_at - Date.parse(r.slot_at)),
    log: {
      fired: outcome('fired'),
      duplicate: outcome('duplicate'),
      missed: loggedMissed,
      skipped_overlap: outcome('skipped_overlap'),
      failed: outcome('failed'),
      refused: outcome('refused'),
      running: outcome('running'),
      lateMs: loggedLate,
      /** From claim to end of each fired slot: how long its fire held one of the scheduler's slots. */
      heldMs: held,
    },
  };
}

export type ScheduleStats = ReturnType<typeof scheduleStats>;

/**
 * The window as the report's LoadResult (docs/performance.md "Schedules (issue 9)"):
 * - requests: slots fired (delivered to the workers at least once); throughputRps: that over the window;
 * - latency p50/p99/mean: lateness, from a slot's time to its first delivery on `agents.invoke`;
 * - errors: fires the scheduler recorded `failed` or `refused` (the agent could not run them:
 *   something else than scheduling broke, e.g. a rate limit, so the run is invalid);
 *   timeouts: fires still `running` when the run was read; non2xx: 0;
 * - details: the counts the goals are judged on (`duplicates`, `missed`) and the cross-checks.
 */
export function toLoadResult(
  stats: ScheduleStats,
  window: ScheduleWindow,
  extra: Record<string, number>,
): LoadResult {
  const p = (values: number[]) => summarizeLatencies(values);
  const runStart = p(stats.runStartLateMs);
  const logLate = p(stats.log.lateMs);
  const held = p(stats.log.heldMs);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    requests: stats.fired,
    throughputRps: stats.fired / ((window.endMs - window.startMs) / 1000),
    ...p(stats.lateMs),
    errors: stats.log.failed + stats.log.refused,
    timeouts: stats.log.running,
    non2xx: 0,
    details: {
      ...extra,
      expected: stats.expected,
      fired: stats.fired,
      duplicates: stats.duplicates,
      missed: stats.missed,
      ran: stats.ran,
      run_start_p50_ms: round(runStart.latencyP50Ms),
      run_start_p99_ms: round(runStart.latencyP99Ms),
      log_fired: stats.log.fired,
      log_duplicate: stats.log.duplicate,
      log_missed: stats.log.missed,
      log_skipped_overlap: stats.log.skipped_overlap,
      log_late_p50_ms: round(logLate.latencyP50Ms),
      log_late_p99_ms: round(logLate.latencyP99Ms),
      log_fire_held_p50_ms: round(held.latencyP50Ms),
      log_fire_held_p99_ms: round(held.latencyP99Ms),
    },
  };
}
