import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type {
  AppendLog,
  Collection,
  CollectionOptions,
  Doc,
  EngineHealth,
  LogOptions,
  Store,
} from '../store.ts';
import { SqliteAppendLog } from './sqlite-append-log.ts';
import { SqliteCollection } from './sqlite-collection.ts';
import { SqliteCounters } from './sqlite-counters.ts';
import { SqliteHandle, type Durability } from './sqlite-handle.ts';
import { HandleCache } from '../handle-cache.ts';
import type { StoreSnapshots } from '../store-snapshots.ts';
import { SqliteSnapshots } from './sqlite-snapshots.ts';

export interface EmbeddedStoreOptions {
  /** SQLite file, typically `<data_dir>/platform.db`; its directory is created if missing. */
  path: string;
  /** Time source for TTL visibility; defaults to the system clock. */
  clock?: () => Date;
  /** `[storage] durability`: `full` (default) syncs every commit to disk, `normal` only at checkpoints. */
  durability?: Durability;
  /**
   * Take the file for this process alone, refusing (`StoreInUseError`) while any other process has
   * it open: for offline tools such as a restore. Other processes cannot open it until it closes.
   */
  exclusive?: boolean;
}

/**
 * The store port on one SQLite file (better-sqlite3). The driver is synchronous; the port's
 * promises simply wrap each call. Several processes may open the same file: WAL lets readers
 * run beside the single writer, and every read-modify-write takes the write lock up front.
 */
export class EmbeddedStore implements Store {
  readonly counters: SqliteCounters;
  /** Keyed by name and options, so repeated opens skip the (idempotent) DDL. */
  private readonly collections = new HandleCache();
  private readonly logs = new HandleCache();

  /** Consistent copies and atomic restores of this file (backups, docs/backup.md). */
  readonly snapshots: StoreSnapshots;

  constructor(
    private readonly db: SqliteHandle,
    private readonly clock: () => Date,
    /** The database file. */
    readonly path: string,
  ) {
    this.counters = new SqliteCounters(db, clock);
    this.snapshots = new SqliteSnapshots(db, path);
  }

  /** What a resolved write survives (`SqliteHandle.open`). */
  get durability(): Durability {
    return this.db.durability;
  }

  collection<T extends Doc>(name: string, options: CollectionOptions<T> = {}): Collection<T> {
    return this.collections.get(name, options, () => new SqliteCollection<T>(this.db, name, options, this.clock));
  }

  log<T extends object>(name: string, options: LogOptions<T> = {}): AppendLog<T> {
    return this.logs.get(name, options, () => new SqliteAppendLog<T>(this.db, name, options));
  }

  async health(): Promise<EngineHealth> {
    if (!this.db.isOpen) return { kind: 'embedded', status: 'down', detail: 'store is closed' };
    try {
      this.db.statement('SELECT 1').get();
      return { kind: 'embedded', status: 'ok' };
    } catch (err) {
      return { kind: 'embedded', status: 'down', detail: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Idempotent; afterwards every operation rejects with "embedded store is closed". */
  async close(): Promise<void> {
    this.collections.clear();
    this.logs.clear();
    this.db.close();
  }
}

/** How long opening waits out other processes opening (or converting) the same new file. */
const OPEN_BUSY_TIMEOUT_MS = 5000;
const OPEN_RETRY_MS = 20;

export async function openEmbeddedStore(options: EmbeddedStoreOptions): Promise<Store> {
  await mkdir(dirname(options.path), { recursive: true });
  const deadline = Date.now() + OPEN_BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      return openOnce(options);
    } catch (err) {
      // Several processes of a fleet opening one new file at once: switching it to WAL (and the
      // first CREATE TABLEs) can answer SQLITE_BUSY without SQLite's busy handler ever waiting.
      // Measured in the fleet e2e test: a worker failed to boot with "database is locked".
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_MS));
    }
  }
}

function openOnce(options: EmbeddedStoreOptions): Store {
  const db = SqliteHandle.open(options.path, options.durability, options.exclusive === true);
  try {
    return new EmbeddedStore(db, options.clock ?? (() => new Date()), options.path);
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Kept here for existing importers; the one function knows every adapter (store-snapshots.ts). */
export { storeSnapshotsOf } from '../store-snapshots.ts';
