import { checkBootGate, ConfigError, loadOrCreateConfig } from '@agent-platform/config';
import { composeApi, type ComposedApi } from './compose.ts';
import type { ApiDeps } from './deps.ts';
import { createApiService } from './service.ts';

/** A service a process runs beside (or instead of) the api listener. */
export interface ProcessService {
  name: string;
  start(): Promise<unknown>;
  stop(): Promise<void>;
}

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
 * One process's lifecycle, shared by the api alone and the all-in-one platform (DECISIONS D1):
 * load the config (first-run setup when there is no file), apply the boot gate, compose, start
 * the services then the api listener, and stop gracefully on SIGINT, SIGTERM or POST /shutdown:
 * the listener first (in-flight requests finish), then the other services in reverse order.
 */
export async function runProcess(options: RunProcessOptions): Promise<void> {
  const { env } = options;
  const loaded = await loadOrCreateConfig({ argv: options.argv, env, cwd: options.cwd, log: (line) => console.log(line) });
  const gate = checkBootGate(loaded.config);
  if (!gate.ok) throw new ConfigError([gate.reason]);

  let composed: ComposedApi | null = null;
  let started: ProcessService[] = [];
  let stopping: Promise<void> | null = null;
  const audit = (action: string, metadata: Record<string, unknown>) =>
    composed?.deps.audit
      .record({ category: 'system', identity: 'system', role: 'admin', action, target: options.name, result: 'success', metadata })
      .catch((err: unknown) => composed?.deps.logger.error({ err }, `audit of ${action} failed`));
  const stop = (reason: string): Promise<void> =>
    (stopping ??= (async () => {
      const logger = composed?.deps.logger;
      logger?.info({ reason }, 'shutting down: waiting for in-flight work');
      await audit('platform.shutdown', { reason });
      for (const service of started.reverse()) {
        await service.stop().catch((err: unknown) => logger?.error({ err, service: service.name }, 'stop failed'));
      }
      started = [];
      await composed?.close();
      logger?.info('stopped');
    })());

  composed = await composeApi(loaded, {
    env,
    cwd: options.cwd,
    requestShutdown: () => void stop('POST /shutdown').then(() => process.exit(0)),
  });
  const { deps } = composed;
  // Spec §Authentication rule 4: an accepted insecure bind is warned about on every boot.
  if (gate.warning !== undefined) deps.logger.warn(gate.warning);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stop(signal).then(() => process.exit(0)));
  }

  const api = createApiService(deps);
  for (const service of options.services?.(deps) ?? []) {
    await service.start();
    started.push(service);
  }
  const { address } = await api.start();
  started.push({ name: 'api', start: async () => undefined, stop: () => api.stop() });
  await audit('platform.boot', { version: deps.version, address, config: loaded.path, process: options.name });
  console.log(`agent platform (${options.name}) ${deps.version} listening on ${address}`);
}

/** Entry-point wrapper: a refused config is the operator's to fix, so print it without a stack. */
export function runMain(run: () => Promise<void>): void {
  run().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  });
}
