import type { RetentionService } from '@agent-platform/domain';
import { createPeriodicService, type ProcessService } from '@agent-platform/engines';

export interface RetentionSchedulerDeps {
  retention: Pick<RetentionService, 'sweepIfDue'>;
  /** `[retention] sweep_interval_secs`, read per tick. */
  intervalSecs: () => number;
  warn: (context: Record<string, unknown>, message: string) => void;
}

/**
 * Runs the retention sweeps (docs/retention.md "Fleet"): every process with the api runs one and
 * ticks several times per period; the store lock in `sweepIfDue` lets exactly one of them sweep
 * each period, and lets another take over a sweep whose process died once its lease lapses.
 * `stop` waits for a sweep in progress to reach its end (each step is short).
 */
export function createRetentionScheduler(deps: RetentionSchedulerDeps): ProcessService {
  return createPeriodicService({
    name: 'retention',
    intervalSecs: deps.intervalSecs,
    tick: () => deps.retention.sweepIfDue(),
    warn: deps.warn,
    failure: 'retention sweep failed; retrying at the next tick',
    // The first tick comes soon after boot, so a restarted node finishes a killed sweep's period.
    firstTickMs: 100,
  });
}

/** The scheduler of a process with the api, over its deps (run-process.ts, tests). */
export function composeRetentionScheduler(deps: {
  retention: RetentionService;
  config: { current(): { retention: { sweep_interval_secs: number } } };
  logger: { warn(context: Record<string, unknown>, message: string): void };
}): ProcessService {
  return createRetentionScheduler({
    retention: deps.retention,
    intervalSecs: () => deps.config.current().retention.sweep_interval_secs,
    warn: (context, message) => deps.logger.warn(context, message),
  });
}
