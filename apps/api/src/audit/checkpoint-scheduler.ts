import type { AuditCheckpoints } from '@agent-platform/domain';
import type { ProcessService } from '@agent-platform/engines';

export interface CheckpointSchedulerDeps {
  checkpoints: Pick<AuditCheckpoints, 'configured' | 'writeIfDue'>;
  /** `[audit.checkpoints] interval_secs`, read per tick. */
  intervalSecs: () => number;
  warn: (context: Record<string, unknown>, message: string) => void;
}

/**
 * Writes the scheduled checkpoints: every api process of a fleet runs one and ticks several
 * times per period; the store claim in `writeIfDue` lets exactly one of them write each period.
 */
export function createCheckpointScheduler(deps: CheckpointSchedulerDeps): ProcessService {
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
      await deps.checkpoints.writeIfDue();
      lastFailure = '';
    } catch (error) {
      const message = (error as Error).message;
      // One warning per distinct failure, not one per tick while the sink is down.
      if (message !== lastFailure) deps.warn({ reason: message }, 'audit checkpoint write failed; retrying at the next tick');
      lastFailure = message;
    }
  }

  return {
    name: 'audit-checkpoints',
    async start() {
      if (!deps.checkpoints.configured) return;
      stopped = false;
      schedule();
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
export function composeCheckpointScheduler(deps: {
  auditCheckpoints: AuditCheckpoints;
  config: { current(): { audit: { checkpoints: { interval_secs: number } } } };
  logger: { warn(context: Record<string, unknown>, message: string): void };
}): ProcessService {
  return createCheckpointScheduler({
    checkpoints: deps.auditCheckpoints,
    intervalSecs: () => deps.config.current().audit.checkpoints.interval_secs,
    warn: (context, message) => deps.logger.warn(context, message),
  });
}
