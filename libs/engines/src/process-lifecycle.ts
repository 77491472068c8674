import type { Logger } from '@agent-platform/observability';

/** A service a process runs (the api listener, the agent worker, the scheduler...). */
export interface ProcessService {
  name: string;
  start(): Promise<unknown>;
  /** Stops taking work and waits for the work in flight (graceful). */
  stop(): Promise<void>;
}

export interface ProcessLifecycle {
  /** Starts the services in order; if one fails, stops those already started and rethrows. */
  start(services: readonly ProcessService[]): Promise<void>;
  /**
   * Stops the started services in reverse order (each finishes its work in flight), then closes
   * the engines. Idempotent: every caller gets the same promise.
   */
  stop(reason: string): Promise<void>;
  /** SIGINT and SIGTERM stop gracefully, then exit 0. A second signal kills at once (Node's default). */
  exitOnSignals(): void;
}

export interface ProcessLifecycleOptions {
  logger: Logger;
  /** Closes the engines once every service stopped. */
  close: () => Promise<void>;
  /** Runs first on stop (the api audits the shutdown here). */
  beforeStop?: (reason: string) => Promise<void>;
}

/**
 * The start/stop half of a process's life, shared by every app's `main.ts` (through `runService`)
 * and the api's `runProcess`, so that all of them drain the same way: stop taking work, finish
 * what is in flight, close the engines, exit 0.
 */
export function createProcessLifecycle(options: ProcessLifecycleOptions): ProcessLifecycle {
  const { logger } = options;
  const started: ProcessService[] = [];
  let stopping: Promise<void> | null = null;

  const stopStarted = async (): Promise<void> => {
    for (const service of started.splice(0).reverse()) {
      await service.stop().catch((err: unknown) => logger.error({ err, service: service.name }, 'stop failed'));
    }
  };

  const stop = (reason: string): Promise<void> =>
    (stopping ??= (async () => {
      logger.info({ reason }, 'shutting down: waiting for in-flight work');
      await options.beforeStop?.(reason).catch((err: unknown) => logger.error({ err }, 'shutdown hook failed'));
      await stopStarted();
      await options.close();
      logger.info('stopped');
    })());

  return {
    async start(services) {
      for (const service of services) {
        try {
          await service.start();
        } catch (error) {
          await stopStarted();
          throw error;
        }
        started.push(service);
      }
    },
    stop,
    exitOnSignals() {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        process.once(signal, () => void stop(signal).then(() => process.exit(0)));
      }
    },
  };
}
