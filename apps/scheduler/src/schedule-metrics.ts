import type { FireOutcome } from '@agent-platform/contracts';
import type { PlatformMetrics } from '@agent-platform/observability';

/** What the scheduler counts (docs/schedules.md "Metrics"). */
export interface ScheduleMetrics {
  /** `schedule_fires_total{outcome}`: slots by what became of them (fired, duplicate, refused, failed, missed, skipped_*). */
  outcome(outcome: FireOutcome): void;
  /** `schedule_missed_slots_total`: slots that never fired (the scheduler was down or too late). */
  missed(count: number): void;
  /** `schedule_fire_lateness_seconds`: from a slot's time to its invocation starting. */
  lateness(ms: number): void;
  /** `schedule_fire_retries_total`: failed fires handed to a retry. */
  retried(): void;
}

/** Lateness buckets: on time (milliseconds) up to a catch-up an hour late. */
const LATENESS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export function scheduleMetrics(metrics: PlatformMetrics): ScheduleMetrics {
  const fires = metrics.counter(
    'schedule_fires_total',
    'Schedule slots by outcome (fired, duplicate, refused, failed, missed, skipped_overlap, skipped_paused).',
    ['outcome'],
  );
  const missed = metrics.counter(
    'schedule_missed_slots_total',
    'Schedule slots that never fired (the scheduler was down, or found them beyond the catch-up window).',
  );
  const lateness = metrics.histogram(
    'schedule_fire_lateness_seconds',
    'Seconds from a schedule slot to its invocation starting.',
    [],
    LATENESS_BUCKETS,
  );
  const retries = metrics.counter('schedule_fire_retries_total', 'Failed schedule fires handed to a retry.');
  return {
    outcome: (outcome) => fires.inc({ outcome }),
    missed: (count) => {
      if (count > 0) missed.inc(undefined, count);
    },
    lateness: (ms) => lateness.observe({}, Math.max(0, ms) / 1000),
    retried: () => retries.inc(),
  };
}

/** For a scheduler given no registry (tests): counts nothing. */
export const NO_SCHEDULE_METRICS: ScheduleMetrics = {
  outcome: () => undefined,
  missed: () => undefined,
  lateness: () => undefined,
  retried: () => undefined,
};
