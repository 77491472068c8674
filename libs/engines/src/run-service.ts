import { ConfigError, loadConfig, type LoadedConfig } from '@agent-platform/config';
import type { Logger, PlatformMetrics } from '@agent-platform/observability';
import { createMetricsListener } from './metrics-listener.ts';
import { createProcessLifecycle, type ProcessLifecycle, type ProcessService } from './process-lifecycle.ts';
import { startProcessTelemetry } from './process-telemetry.ts';
import { platformVersion } from './platform-version.ts';
import { HeapTuningError, tuneHeap } from './heap-tuning.ts';

/** What an app's `compose.ts` hands the process runner. */
export interface ComposedProcess {
  logger: Logger;
  /** Started in this order, stopped in the reverse order. */
  services: ProcessService[];
  /** Closes the engines; called once every service stopped. */
  close(): Promise<void>;
  /** Re-reads the config file (and what it points at, the licence); run on SIGHUP. */
  reload?(): Promise<void>;
  /** Appended to the boot line once the services started (a listener's address). */
  bootDetail?(): string;
  /** This process's metrics, served on `[telemetry] metrics_listen` when it is set. */
  metrics?: PlatformMetrics;
}

export interface ComposeContext {
  env: Record<string, string | undefined>;
  cwd: string;
  /** The process's name (`agent-worker`, ...), for log lines and connection names. */
  name: string;
}

export interface RunServiceOptions {
  /** The app: `agent-worker`, `scheduler`, `channel-bridge`. */
  name: string;
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  compose(loaded: LoadedConfig, context: ComposeContext): Promise<ComposedProcess>;
  /**
   * False for an app that takes no work from the bus (the registry serves HTTP only), so it may
   * run alone on the embedded bus. Default true: the app is refused on `bus = "embedded"`.
   */
  needsSharedBus?: boolean;
}

/**
 * Refuses `[runtime] bus = "embedded"` for an app running alone: the embedded bus lives inside one
 * process, so a worker or scheduler on it could never hear the api (or anyone else).
 */
export function assertSharedBus(loaded: LoadedConfig, name: string): void {
  if (loaded.config.runtime.bus !== 'embedded') return;
  throw new ConfigError([
    `runtime.bus = "embedded" connects only the services of one process, so the ${name} running alone would never ` +
      'receive any work: set [runtime] bus = "nats" (and nats_url) for a fleet, or run everything in one process with `npm start`',
  ]);
}

/**
 * One app running alone in a fleet (DECISIONS D1): loads the config file (required: only the
 * all-in-one and the api do a first-run setup), refuses an in-process bus, composes the app,
 * starts its services, prints one boot line and drains on SIGINT/SIGTERM (stop taking work,
 * finish what is in flight, close the engines, exit 0). SIGHUP reloads the config when the app
 * supports it (`ComposedProcess.reload`).
 */
export async function runService(options: RunServiceOptions): Promise<ProcessLifecycle> {
  const { name, env, cwd } = options;
  const loaded = await loadConfig({ argv: options.argv, env, cwd });
  if (options.needsSharedBus !== false) assertSharedBus(loaded, name);
  // Before the engines open: they are wrapped for tracing only when it is on (docs/observability.md).
  const telemetry = await startProcessTelemetry(loaded.config, { name, env });
  let composed: ComposedProcess;
  try {
    composed = await options.compose(loaded, { env, cwd, name });
  } catch (error) {
    await telemetry.shutdown();
    throw error;
  }
  telemetry.report((message) => composed.logger.warn({ component: 'telemetry' }, message));
  const close = async (): Promise<void> => {
    await composed.close();
    await telemetry.shutdown();
  };
  const listen = loaded.config.telemetry.metrics_listen;
  const metricsListener = listen !== '' && composed.metrics !== undefined ? createMetricsListener({ listen, metrics: composed.metrics, logger: composed.logger }) : null;
  const lifecycle = createProcessLifecycle({ logger: composed.logger, close });
  lifecycle.exitOnSignals();
  if (composed.reload !== undefined) {
    process.on('SIGHUP', () => {
      composed.reload?.().then(
        () => composed.logger.info('config reloaded (SIGHUP)'),
        (err: unknown) => composed.logger.error({ err }, 'config reload (SIGHUP) refused; the running config is unchanged'),
      );
    });
  }
  try {
    await lifecycle.start([...(metricsListener === null ? [] : [metricsListener]), ...composed.services]);
  } catch (error) {
    await close();
    throw error;
  }
  const { bus, store, queue } = loaded.config.runtime;
  composed.logger.info({ process: name, config: loaded.path, bus, store, queue }, `${name} started`);
  const details = [composed.bootDetail?.(), metricsListener === null ? undefined : `metrics on ${metricsListener.url()}`].filter((d) => d !== undefined);
  const detail = details.length === 0 ? undefined : details.join('; ');
  console.log(`agent platform (${name}) ${platformVersion()} started: bus ${bus}, store ${store}, queue ${queue}${detail === undefined ? '' : `; ${detail}`}`);
  return lifecycle;
}

/**
 * Entry-point wrapper: tunes the heap (heap-tuning.ts), then runs; a refused config is the
 * operator's to fix, so print it without a stack.
 */
export function runMain(run: () => Promise<unknown>): void {
  const started = (async () => {
    tuneHeap(process.env);
    return run();
  })();
  started.catch((error: unknown) => {
    console.error(error instanceof ConfigError || error instanceof HeapTuningError ? error.message : error);
    process.exit(1);
  });
}
