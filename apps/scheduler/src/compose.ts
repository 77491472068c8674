import { createConfigHolder, type LoadedConfig } from '@agent-platform/config';
import { openProcess, type ComposeContext, type ComposeOptions, type ComposedProcess } from '@agent-platform/engines';
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

/** The scheduler running alone (a fleet member): its engines from `[runtime]`, and the service. */
export async function composeScheduler(loaded: LoadedConfig, context: ComposeContext, options: ComposeOptions = {}): Promise<ComposedProcess> {
  const config = createConfigHolder(loaded, { env: context.env, cwd: context.cwd });
  const { clock, logger, engines } = await openProcess(config.current(), context, options);
  const scheduler = createSchedulerService({
    queue: engines.queue,
    bus: engines.bus,
    logger,
    clock,
    requestTimeoutMs: fireTimeoutMs(() => config.current()),
  });
  return { logger, services: [scheduler], close: () => engines.close(), reload: async () => void (await config.reload()) };
}
