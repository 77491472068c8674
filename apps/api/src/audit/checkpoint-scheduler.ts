import type { AuditCheckpoints } from '@agent-platform/domain';
import { createPeriodicService, type ProcessService } from '@agent-platform/engines';

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
  return createPeriodicService({
    name: 'audit-checkpoints',
    intervalSecs: deps.intervalSecs,
    tick: () => deps.checkpoints.writeIfDue(),
    warn: deps.warn,
    failure: 'audit checkpoint write failed; retrying at the next tick',
    enabled: () => deps.checkpoints.configured,
  });
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
