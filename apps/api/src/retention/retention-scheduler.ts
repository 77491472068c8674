import type { RetentionService } from '@agent-platform/domain';
import type { ProcessService } from '@agent-platform/engines';

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
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = true;
  let lastFailure = '';

  const tickMs = (): number => Math.min(60_000, Math.max(100, (deps.intervalSecs() * 1000) / 4));

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = tick().finally(schedule);
    }, tickMs());
    timer.unref();
  }

  async function tick(): Promise<void> {
    try {
      await deps.retention.sweepIfDue();
      lastFailure = '';
    } catch (error) {
      const message = (error as Error).message;
      if (message !== lastFailure)
        deps.warn({ reason: message }, 'retention sweep failed; retrying at the next tick');
      lastFailure = message;
    }
  }

  return {
    name: 'retention',
    async start() {
      stopped = false;
      // The first tick comes soon after boot, so a restarted node finishes a killed sweep's period.
      timer = setTimeout(() => {
        timer = null;
        running = tick().finally(schedule);
      }, 100);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
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
