import { createConfigHolder, type LoadedConfig } from '@agent-platform/config';
import { createAgentStore, createEventPublisher, createScheduleService, storedEventInterest } from '@agent-platform/domain';
import { openProcess, type ComposeContext, type ComposeOptions, type ComposedProcess } from '@agent-platform/engines';
import type { PlatformConfig } from '@agent-platform/contracts';
import { createMetrics, platformInstruments } from '@agent-platform/observability';
import type { FireRetry } from './handlers/fire-handler.ts';
import { scheduleMetrics } from './schedule-metrics.ts';
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

/** `[schedules] fire_attempts` and `fire_backoff_ms` of the running config. */
export function fireRetry(config: () => PlatformConfig): () => FireRetry {
  return () => ({ attempts: config().schedules.fire_attempts, backoffMs: config().schedules.fire_backoff_ms });
}

/**
 * The scheduler running alone (a fleet member): its engines from `[runtime]`, and the service.
 * Its metrics are served on `[telemetry] metrics_listen` when it is set (docs/observability.md).
 */
export async function composeScheduler(loaded: LoadedConfig, context: ComposeContext, options: ComposeOptions = {}): Promise<ComposedProcess> {
  const config = createConfigHolder(loaded, { env: context.env, cwd: context.cwd });
  const current = (): PlatformConfig => config.current();
  const { clock, logger, engines } = await openProcess(current(), context, options);
  const metrics = createMetrics();
  const instruments = platformInstruments(metrics);
  const schedules = createScheduleService({
    store: engines.store,
    queue: engines.queue,
    agents: createAgentStore(engines.store),
    clock,
    settings: () => current().schedules,
  });
  const scheduler = createSchedulerService({
    queue: engines.queue,
    bus: engines.bus,
    logger,
    schedules,
    requestTimeoutMs: fireTimeoutMs(current),
    retry: fireRetry(current),
    metrics: scheduleMetrics(metrics),
    events: createEventPublisher({ bus: engines.bus, clock, warn: (context, message) => logger.warn(context, message), onEmit: (kind, data) => instruments.event(kind, data), interest: storedEventInterest(engines.store, clock) }),
  });
  return { logger, services: [scheduler], close: () => engines.close(), reload: async () => void (await config.reload()), metrics };
}
