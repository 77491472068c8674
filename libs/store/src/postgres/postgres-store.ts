import type { AppendLog, Collection, CollectionOptions, Doc, EngineHealth, LogOptions, Store } from '../store.ts';
import { HandleCache } from '../handle-cache.ts';
import { SerialQueue } from '../mongodb/optimistic-append.ts';
import { PgAppendLog, type AppendLane } from './pg-append-log.ts';
import { PgCollection } from './pg-collection.ts';
import { PgCounters } from './pg-counters.ts';
import { PgHandle } from './pg-handle.ts';
import { KnownTip } from './pg-known-tip.ts';
import { PgReadVersions, READ_VERSIONS_TABLE } from './pg-read-versions.ts';
import { PgSnapshots } from './pg-snapshots.ts';
import type { StoreSnapshots } from '../store-snapshots.ts';
import { migrate } from './pg-migrations.ts';
import { assertPgName, quoteIdent } from './pg-sql.ts';

export interface PostgresStoreOptions {
  /** One connection string, e.g. `postgres://user:pass@host:5432/agent_platform?sslmode=verify-full`. Never logged. */
  url?: string;
  /** Several: tried in order whenever a connection cannot be made (failover, docs/postgres.md). */
  urls?: readonly string[];
  /** The password, overriding any in the URLs (from `[runtime] postgres_password_env`). */
  password?: string;
  /** Connections per URL; default 10. */
  poolSize?: number;
  /** `statement_timeout` of every connection; default 30 s. A statement past it rejects. */
  statementTimeoutMs?: number;
  /** How long making one connection may take; default 10 s (or the statement timeout if shorter). */
  connectTimeoutMs?: number;
  /** The store's statements prepared by name once per connection; default true (docs/postgres.md "Prepared statements"). */
  preparedStatements?: boolean;
  /** The PostgreSQL schema holding the tables; default `public`. */
  schema?: string;
  /** Time source for TTL visibility; defaults to the system clock. */
  clock?: () => Date;
  /** How often expired documents and counters are purged; default 60 s. */
  purgeIntervalMs?: number;
}

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_PURGE_INTERVAL_MS = 60_000;

/**
 * The store port on one PostgreSQL database (node-postgres, one pool). See each class for how
 * its guarantees hold across processes, and docs/postgres.md for operating it.
 */
export class PostgresStore implements Store {
  readonly counters: PgCounters;
  private readonly collections = new HandleCache();
  private readonly logs = new HandleCache();
  /** One per log name (whatever its options), shared by every handle on that log: its queue and the tip this process wrote. */
  private readonly appendLanes = new Map<string, AppendLane>();
  /** Every ttl collection opened, by table, for the purge timer. */
  private readonly ttlCollections = new Map<string, PgCollection<Doc>>();
  private readonly purgeTimer: NodeJS.Timeout;
  /** Snapshots in the embedded snapshot format and their restores in one transaction (backups, docs/backup.md). */
  readonly snapshots: StoreSnapshots;
  /** The answers of read-mostly collections, shared by every handle of this store (pg-read-versions.ts). */
  private readonly reads: PgReadVersions;

  constructor(
    private readonly handle: PgHandle,
    private readonly schema: string,
    private readonly clock: () => Date,
    purgeIntervalMs: number = DEFAULT_PURGE_INTERVAL_MS,
  ) {
    this.counters = new PgCounters(handle, schema, clock);
    this.snapshots = new PgSnapshots(handle, schema);
    const versions = `${quoteIdent(schema)}.${READ_VERSIONS_TABLE}`;
    this.reads = new PgReadVersions(async () => {
      const rows = await handle.query<{ tbl: string; version: string }>(`SELECT tbl, version FROM ${versions}`);
      return new Map(rows.map((row) => [row.tbl, Number(row.version)]));
    });
    this.purgeTimer = setInterval(() => void this.purge(), purgeIntervalMs);
    this.purgeTimer.unref();
  }

  collection<T extends Doc>(name: string, options: CollectionOptions<T> = {}): Collection<T> {
    this.assertOpen();
    return this.collections.get(name, options, () => {
      const collection = new PgCollection<T>(this.handle, this.schema, name, options, this.clock, this.reads);
      if (collection.hasTtl) this.ttlCollections.set(collection.table, collection as unknown as PgCollection<Doc>);
      return collection;
    });
  }

  log<T extends object>(name: string, options: LogOptions<T> = {}): AppendLog<T> {
    this.assertOpen();
    return this.logs.get(name, options, () => {
      let lane = this.appendLanes.get(name);
      if (lane === undefined) {
        lane = { queue: new SerialQueue(), tip: new KnownTip() };
        this.appendLanes.set(name, lane);
      }
      return new PgAppendLog<T>(this.handle, this.schema, name, options, lane);
    });
  }

  async health(): Promise<EngineHealth> {
    if (!this.handle.isOpen) return { kind: 'postgres', status: 'down', detail: 'store is closed' };
    try {
      await this.handle.ping();
      return { kind: 'postgres', status: 'ok' };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { kind: 'postgres', status: 'down', detail: this.handle.redact(message) };
    }
  }

  /** Idempotent; afterwards every operation rejects with "postgres store is closed". */
  async close(): Promise<void> {
    clearInterval(this.purgeTimer);
    this.collections.clear();
    this.logs.clear();
    this.appendLanes.clear();
    this.ttlCollections.clear();
    await this.handle.close();
  }

  /** One pass of the TTL purge; a failure (server away) waits for the next tick. */
  async purge(): Promise<void> {
    for (const collection of this.ttlCollections.values()) await collection.purgeExpired().catch(() => undefined);
    await this.counters.purgeExpired().catch(() => undefined);
  }

  private assertOpen(): void {
    if (!this.handle.isOpen) throw new Error('postgres store is closed');
  }
}

/**
 * Connects, migrates the schema (under an advisory lock) and returns the store; a wrong host,
 * wrong credentials or a schema newer than this code fail here, not on first request. Errors
 * name the URLs with their passwords replaced by `***`.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const urls = options.urls ?? (options.url === undefined ? [] : [options.url]);
  if (urls.length === 0) throw new TypeError('postgres store: give url or urls');
  const schema = assertPgName('schema', options.schema ?? 'public');
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  if (!Number.isSafeInteger(poolSize) || poolSize < 1) throw new RangeError('postgres store: poolSize must be a positive integer');
  const handle = new PgHandle({
    urls,
    ...(options.password === undefined ? {} : { password: options.password }),
    poolSize,
    statementTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs ?? Math.min(DEFAULT_CONNECT_TIMEOUT_MS, statementTimeoutMs),
    preparedStatements: options.preparedStatements ?? true,
  });
  try {
    await migrate(handle, schema);
  } catch (err) {
    await handle.close();
    const message = err instanceof Error ? err.message : String(err);
    // The cause is safe to keep: connection failures reach here already rewritten without secrets
    // (PgHandle), and server errors never quote the connection parameters.
    throw new Error(handle.redact(message.startsWith('postgres store') ? message : `postgres store: cannot open: ${message}`), {
      cause: err,
    });
  }
  return new PostgresStore(handle, schema, options.clock ?? (() => new Date()), options.purgeIntervalMs);
}
