import { createConfigHolder, type LoadedConfig } from '@agent-platform/config';
import { systemClock, type Clock } from '@agent-platform/domain';
import { openEngines, type ComposeContext, type ComposedProcess } from '@agent-platform/engines';
import { createLogger } from '@agent-platform/observability';
import type { PlatformConfig } from '@agent-platform/contracts';
import { createSchedulerService } from './service.ts';

/**
 * Waited beyond `[agents] invocation_timeout_secs` for a fire's answer, as the api does, so the
 * worker's own Timeout (which settles the key and the budget) arrives before the bus gives up.
 */
const BUS_GRACE_SECS = 5;

/** How long a fire waits for the worker under this config. */
export function fireTimeoutMs(config: () => PlatformConfig): () => number {
  return () => (config().agents.invocation_timeout_secs + BUS_GRACE_SECS) * 1000;
}

export interface ComposeSchedulerOptions {
  logDestination?: NodeJS.WritableStream | 'stdout' | 'silent';
  clock?: Clock;
}

/** The scheduler running alone (a fleet member): its engines from `[runtime]`, and the service. */
export async function composeScheduler(loaded: LoadedConfig, context: ComposeContext, options: ComposeSchedulerOptions = {}): Promise<ComposedProcess> {
  const config = createConfigHolder(loaded, { env: context.env, cwd: context.cwd });
  const boot = config.current();
  const clock = options.clock ?? systemClock;
  const { logger } = createLogger({ level: boot.logging.level, bufferLines: boot.logging.buffer_lines, destination: options.logDestination ?? 'stdout' });
  const engines = await openEngines(boot, { clock, logger, dataDir: boot.storage.data_dir, processName: context.name });
  const scheduler = createSchedulerService({
    queue: engines.queue,
    bus: engines.bus,
    logger,
    clock,
    requestTimeoutMs: fireTimeoutMs(() => config.current()),
  });
  return { logger, services: [scheduler], close: () => engines.close(), reload: async () => void (await config.reload()) };
}
