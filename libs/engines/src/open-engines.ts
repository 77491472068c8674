import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PlatformConfig } from '@agent-platform/contracts';
import type { Clock } from '@agent-platform/domain';
import { tracingEnabled, type Logger } from '@agent-platform/observability';
import type { Bus } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Queue } from '@agent-platform/queue';
import { openEmbeddedQueue } from '@agent-platform/queue/embedded';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { traceBus } from './traced-bus.ts';
import { traceQueue } from './traced-queue.ts';

/** The three ports a process runs on, opened from `[runtime]`. */
export interface Engines {
  store: Store;
  bus: Bus;
  queue: Queue;
  /** Closes the queue, the bus, then the store (reverse order of opening); never throws. */
  close(): Promise<void>;
}

export interface OpenEnginesOptions {
  clock: Clock;
  logger: Logger;
  /** `[storage] data_dir`, resolved: the embedded store and queue files live here. */
  dataDir: string;
  /** Shown to the servers (the NATS connection name): which app this process is. */
  processName?: string;
  /** The process environment main.ts read: `[runtime] postgres_password_env` is looked up here. */
  env?: Record<string, string | undefined>;
  /**
   * Wraps the opened store before anything uses it: the store-operation guard's counter
   * (`StoreOperationCounter.wrap`, docs/performance.md). Never set by a production root.
   */
  decorateStore?: (store: Store) => Store;
}

/** The embedded store's file: one SQLite database in WAL mode, shareable by the processes of one host. */
export const EMBEDDED_STORE_FILE = 'platform.db';
/** The embedded queue's file (its own SQLite database, also shareable on one host). */
export const EMBEDDED_QUEUE_FILE = 'queue.db';

/**
 * The one place that turns `[runtime]` into adapters (STYLE §1): every app's `compose.ts` calls
 * this and never names an adapter itself.
 *
 * - store: `embedded` = `<data_dir>/platform.db` (SQLite WAL; processes of ONE host may share it,
 *   never processes on several hosts or over a network filesystem), `mongodb` = `runtime.mongodb_url`,
 *   `postgres` = `runtime.postgres_url` (several, comma-separated, for failover; the password from
 *   the variable `runtime.postgres_password_env` names, when set; docs/postgres.md).
 * - bus: `embedded` = in this process only (so a fleet of processes needs `nats`), `nats` =
 *   `runtime.nats_url`.
 * - queue: `embedded` = `<data_dir>/queue.db` (shareable on one host), `bullmq` = `runtime.redis_url`.
 *
 * While tracing is on (`[telemetry] otlp_endpoint`, started before this), the bus and the queue
 * are wrapped to carry the trace context and trace their handlers (traced-bus.ts, traced-queue.ts);
 * with tracing off they are returned as opened.
 *
 * A failure to open one engine closes those already open and rethrows, naming the engine.
 * The distributed adapters are imported only when `[runtime]` names them: their drivers
 * (mongodb, bullmq) cost a process about 30 MB of memory it would not use (docs/performance.md).
 */
export async function openEngines(config: PlatformConfig, options: OpenEnginesOptions): Promise<Engines> {
  const { runtime } = config;
  const { logger, clock, dataDir } = options;
  const log = logger.child({ component: 'engines' });
  const closers: Array<{ name: string; close: () => Promise<void> }> = [];
  const close = async (): Promise<void> => {
    for (const engine of closers.splice(0).reverse()) {
      await engine.close().catch((err: unknown) => log.error({ err, engine: engine.name }, 'closing an engine failed'));
    }
  };
  const opening = async <T extends { close(): Promise<void> }>(name: string, open: () => Promise<T>): Promise<T> => {
    try {
      const engine = await open();
      closers.push({ name, close: () => engine.close() });
      return engine;
    } catch (cause) {
      throw new Error(`cannot open the ${name}: ${(cause as Error).message}`, { cause });
    }
  };

  try {
    if (runtime.store === 'embedded' || runtime.queue === 'embedded') await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const store = await opening(`store (${runtime.store})`, (): Promise<Store> => {
      if (runtime.store === 'mongodb') {
        return import('@agent-platform/store/mongodb').then(({ openMongoStore }) =>
          openMongoStore({ url: runtime.mongodb_url, clock: () => clock.now() }),
        );
      }
      if (runtime.store === 'postgres') {
        const password = postgresPassword(runtime.postgres_password_env, options.env ?? {});
        return import('@agent-platform/store/postgres').then(({ openPostgresStore }) =>
          openPostgresStore({
            urls: splitPostgresUrls(runtime.postgres_url),
            ...(password === undefined ? {} : { password }),
            poolSize: runtime.postgres_pool_size,
            statementTimeoutMs: runtime.postgres_statement_timeout_ms,
            preparedStatements: runtime.postgres_prepared_statements,
            clock: () => clock.now(),
          }),
        );
      }
      return openEmbeddedStore({ path: join(dataDir, EMBEDDED_STORE_FILE), clock: () => clock.now(), durability: config.storage.durability });
    });
    const bus = await opening(`bus (${runtime.bus})`, (): Promise<Bus> =>
      runtime.bus === 'nats'
        ? import('@agent-platform/bus/nats').then(({ connectNatsBus }) =>
            connectNatsBus({
              servers: runtime.nats_url,
              ...(options.processName === undefined ? {} : { name: options.processName }),
              onError: (err, context) => log.error({ err, ...context }, 'bus error'),
            }),
          )
        : Promise.resolve(createEmbeddedBus({ onError: (err) => log.error({ err }, 'bus error') })),
    );
    const queue = await opening(`queue (${runtime.queue})`, (): Promise<Queue> =>
      runtime.queue === 'bullmq'
        ? import('@agent-platform/queue/bullmq').then(({ connectBullmqQueue }) =>
            connectBullmqQueue({
              redisUrl: runtime.redis_url,
              lockMs: runtime.queue_job_lock_secs * 1000,
              clock,
              // Connection errors repeat on every reconnect attempt while Redis is down: a warning each.
              onError: (err) => log.warn({ err }, 'queue connection error'),
            }),
          )
        : openEmbeddedQueue({
            path: join(dataDir, EMBEDDED_QUEUE_FILE),
            clock,
            durability: config.storage.durability,
            leaseMs: runtime.queue_job_lock_secs * 1000,
            onError: (err) => log.error({ err }, 'queue error'),
          }),
    );
    const traced = tracingEnabled();
    const decorated = options.decorateStore ? options.decorateStore(store) : store;
    return { store: decorated, bus: traced ? traceBus(bus) : bus, queue: traced ? traceQueue(queue) : queue, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * `[runtime] postgres_url` as the list of URLs the store tries in order: split at commas that
 * start another `postgres://` or `postgresql://` URL, so a comma inside one (a query option) stays.
 */
export function splitPostgresUrls(value: string): string[] {
  return value
    .split(/,\s*(?=postgres(?:ql)?:\/\/)/i)
    .map((url) => url.trim())
    .filter((url) => url !== '');
}

/** The password from the variable `postgres_password_env` names; a named but unset variable is an error. */
function postgresPassword(envName: string | undefined, env: Record<string, string | undefined>): string | undefined {
  if (envName === undefined) return undefined;
  const password = env[envName];
  if (password === undefined || password === '') {
    throw new Error(`[runtime] postgres_password_env names ${envName}, which is not set`);
  }
  return password;
}
