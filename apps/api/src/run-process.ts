import { composeCheckpointScheduler } from './audit/checkpoint-scheduler.ts';
import { composeRetentionScheduler } from './retention/retention-scheduler.ts';
import { checkBootGate, ConfigError, loadOrCreateConfig } from '@agent-platform/config';
import { createMetricsListener, createProcessLifecycle, startProcessTelemetry, type ProcessLifecycle, type ProcessService } from '@agent-platform/engines';
import { composeApi } from './compose.ts';
import type { ApiDeps } from './deps.ts';
import { createApiService } from './service.ts';
import { composeRevocationWatcher } from './revocations/compose-revocation-watcher.ts';

// Kept importable from here: the all-in-one root and the test api build on them.
export { runMain, type ProcessService } from '@agent-platform/engines';

export interface RunProcessOptions {
  /** Shown in logs and audit entries: `api` alone, `platform` for the all-in-one. */
  name: string;
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  /** Services started before the api listener (so it only takes traffic once they are ready). */
  services?: (deps: ApiDeps) => ProcessService[];
}

/**
 * The lifecycle of a process with the api listener, shared by the api alone and the all-in-one
 * platform (DECISIONS D1): load the config (first-run setup when there is no file), apply the
 * boot gate, compose, start the services then the api listener, and stop gracefully on SIGINT,
 * SIGTERM or POST /shutdown: the listener first (in-flight requests finish), then the other
 * services in reverse order (`createProcessLifecycle`, the same as every other app).
 */
export async function runProcess(options: RunProcessOptions): Promise<void> {
  const { env } = options;
  const loaded = await loadOrCreateConfig({ argv: options.argv, env, cwd: options.cwd, log: (line) => console.log(line) });
  const gate = checkBootGate(loaded.config);
  if (!gate.ok) throw new ConfigError([gate.reason]);

  let lifecycle: ProcessLifecycle | null = null;
  // Before the engines open: they are wrapped for tracing only when it is on (docs/observability.md).
  const telemetry = await startProcessTelemetry(loaded.config, { name: options.name, env });
  const composed = await composeApi(loaded, {
    env,
    cwd: options.cwd,
    processName: options.name,
    requestShutdown: () => void lifecycle?.stop('POST /shutdown').then(() => process.exit(0)),
  }).catch(async (error: unknown) => {
    await telemetry.shutdown();
    throw error;
  });
  const { deps } = composed;
  telemetry.report((message) => deps.logger.warn({ component: 'telemetry' }, message));
  const close = async (): Promise<void> => {
    await composed.close();
    await telemetry.shutdown();
  };
  const audit = (action: string, metadata: Record<string, unknown>) =>
    deps.audit
      .record({ category: 'system', identity: 'system', role: 'admin', action, target: options.name, result: 'success', metadata })
      .catch((err: unknown) => deps.logger.error({ err }, `audit of ${action} failed`));
  lifecycle = createProcessLifecycle({
    logger: deps.logger,
    close,
    beforeStop: async (reason) => void (await audit('platform.shutdown', { reason })),
  });
  // Spec §Authentication rule 4: an accepted insecure bind is warned about on every boot.
  if (gate.warning !== undefined) deps.logger.warn(gate.warning);
  if (options.name === 'api' && loaded.config.runtime.bus === 'embedded') {
    deps.logger.warn('runtime.bus = "embedded": no agent worker outside this process can take invocations; a fleet needs bus = "nats"');
  }
  lifecycle.exitOnSignals();

  const api = createApiService(deps);
  let address = '';
  const listener: ProcessService = {
    name: 'api',
    start: async () => ({ address } = await api.start()),
    stop: () => api.stop(),
  };
  // `[telemetry] metrics_listen`: the same registry as GET /metrics, without an API key (docs/observability.md).
  const metricsListen = loaded.config.telemetry.metrics_listen;
  const metricsListener = metricsListen === '' ? [] : [createMetricsListener({ listen: metricsListen, metrics: deps.metrics, logger: deps.logger })];
  try {
    // The revocation watcher, the audit checkpoint scheduler and the retention scheduler run in every
    // process with the api: the all-in-one and each api node (each claims its work in the store).
    await lifecycle.start([
      ...metricsListener,
      ...(options.services?.(deps) ?? []),
      composeRevocationWatcher(deps, env),
      composeCheckpointScheduler(deps),
      composeRetentionScheduler(deps),
      listener,
    ]);
  } catch (error) {
    await close();
    throw error;
  }
  await audit('platform.boot', { version: deps.version, address, config: loaded.path, process: options.name });
  const metricsDetail = metricsListener.map((m) => ` (metrics on ${m.url()})`).join('');
  // The engines as the other apps' start line names them (libs/engines/src/run-service.ts).
  const { bus, store, queue } = loaded.config.runtime;
  console.log(`agent platform (${options.name}) ${deps.version} started: bus ${bus}, store ${store}, queue ${queue}; listening on ${address}${metricsDetail}`);
}
