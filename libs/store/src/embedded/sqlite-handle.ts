import { createRequire } from 'node:module';
import { GroupCommit } from './group-commit.ts';
import { ReadCaches } from './read-cache.ts';

export type SqlValue = string | number | bigint | null;

/** `[storage] durability`: `full` syncs every commit to disk, `normal` only at checkpoints. */
export type Durability = 'full' | 'normal';

/** The slice of better-sqlite3 this adapter uses (the package ships no TypeScript types). */
export interface SqliteStatement {
  run(...params: SqlValue[]): { changes: number };
  /** Makes `get`/`all` answer the first column's value instead of a row object (this statement only). */
  pluck(): SqliteStatement;
  get(...params: SqlValue[] | [Record<string, SqlValue>]): unknown;
  all(...params: SqlValue[]): unknown[];
}

interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  readonly inTransaction: boolean;
  close(): void;
}

type SqliteConstructor = new (path: string, options?: { timeout?: number }) => SqliteDatabase;

/**
 * How long a writer waits for another process's write transaction before failing. Write
 * transactions here are sub-millisecond, so 5 s only runs out when something is truly stuck.
 */
const BUSY_TIMEOUT_MS = 5000;
/** Dynamic `find` queries produce a bounded but open set of SQL texts; cap the cache anyway. */
const MAX_CACHED_STATEMENTS = 500;

const requireCjs = createRequire(import.meta.url);

/**
 * One SQLite connection plus a prepared-statement cache. Every access goes through `database`,
 * so any call after `close()` fails with one clear error instead of a driver message.
 */
export class SqliteHandle {
  private db: SqliteDatabase | null;
  private readonly statements = new Map<string, SqliteStatement>();
  private readonly writes = new GroupCommit(
    () => {
      const db = this.database;
      return {
        run: (sql) => void this.statement(sql).run(),
        begin: (wait) => this.begin(wait),
        get inTransaction() {
          return db.inTransaction;
        },
      };
    },
    { lockTimeoutMs: BUSY_TIMEOUT_MS },
  );

  /** Answers of read-mostly collections, valid while nothing writes their tables (read-cache.ts). */
  readonly reads = new ReadCaches(() => this.dataVersion());
  /** `PRAGMA data_version`, answering the bare number: its own statement, not the shared cache's. */
  private dataVersionStatement: SqliteStatement | null = null;

  private constructor(db: SqliteDatabase) {
    this.db = db;
  }

  /** True inside a write transaction (a read then may see writes that could still roll back). */
  get inTransaction(): boolean {
    return this.database.inTransaction;
  }

  /**
   * Opens the file in WAL mode so readers never block the single writer and several processes
   * can share it. `durability` (`[storage] durability`) picks `synchronous`: `full` (the default)
   * syncs the WAL at every commit, so what a write acknowledged survives an OS crash or a power
   * loss (audit entries, spend counters, idempotency results); `normal` syncs only at checkpoints:
   * it survives a crash of the process, but an OS crash or power loss can drop the last commits
   * (and a missing tail of the audit chain is invisible to its verification). Measured cost of
   * `full`: docs/performance.md.
   */
  static open(path: string, durability: Durability = 'full', exclusive = false): SqliteHandle {
    const Database = requireCjs('better-sqlite3') as SqliteConstructor;
    const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    try {
      if (exclusive) takeExclusiveLock(db, path);
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
    } catch (err) {
      db.close();
      throw err;
    }
    return new SqliteHandle(db);
  }

  /** The durability this connection runs with, read back from SQLite. */
  get durability(): Durability {
    return Number(this.database.pragma('synchronous', { simple: true })) >= 2 ? 'full' : 'normal';
  }

  get isOpen(): boolean {
    return this.db !== null;
  }

  private get database(): SqliteDatabase {
    if (this.db === null) throw new Error('embedded store is closed');
    return this.db;
  }

  exec(sql: string): void {
    this.database.exec(sql);
  }

  private dataVersion(): number {
    this.dataVersionStatement ??= this.database.prepare('PRAGMA data_version').pluck();
    return this.dataVersionStatement.get() as number;
  }

  statement(sql: string): SqliteStatement {
    const db = this.database;
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      if (this.statements.size >= MAX_CACHED_STATEMENTS) this.statements.clear();
      stmt = db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /**
   * Every write of the store goes through here: `fn` runs inside `BEGIN IMMEDIATE`, so the write
   * lock is taken before its first read and a read-then-write (log tip, counter value, document
   * version) cannot be overtaken by another process between the two (a deferred transaction would
   * instead fail with SQLITE_BUSY on its upgrade to writer). The transaction is shared with the
   * other writes of the same event-loop turn (group-commit.ts); the promise settles after the
   * commit. `fn` must be synchronous and must not submit another write.
   */
  write<R>(fn: () => R): Promise<R> {
    if (this.db === null) return Promise.reject(new Error('embedded store is closed'));
    return this.writes.submit(fn);
  }

  /**
   * `BEGIN IMMEDIATE`. Not waiting: SQLite's busy handler is switched off for the attempt, so a
   * lock held by another process answers false at once instead of sleeping with the event loop
   * blocked (group-commit.ts retries from a timer). Reads keep the busy timeout.
   */
  private begin(wait: boolean): boolean {
    if (wait) {
      this.statement('BEGIN IMMEDIATE').run();
      return true;
    }
    this.statement('PRAGMA busy_timeout = 0').get();
    try {
      this.statement('BEGIN IMMEDIATE').run();
      return true;
    } catch (err) {
      if ((err as { code?: unknown } | null)?.code === 'SQLITE_BUSY') return false;
      throw err;
    } finally {
      this.statement(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`).get();
    }
  }

  /** Commits the writes still waiting for their batch, then closes the connection. */
  close(): void {
    if (this.db !== null) this.writes.flush();
    const db = this.db;
    this.db = null;
    this.statements.clear();
    this.dataVersionStatement = null;
    db?.close();
  }
}

/** Raised by an exclusive open while another connection (another process) has the file open. */
export class StoreInUseError extends Error {
  readonly code = 'STORE_IN_USE';
  constructor(path: string) {
    super(`${path} is open in another process (a platform process on this data dir is running): stop every process using it first`);
    this.name = 'StoreInUseError';
  }
}

/**
 * Holds the file for this connection alone (offline tools: a restore must not run under a live
 * platform). In WAL mode every open connection keeps a shared lock on the database file, so the
 * exclusive lock that `locking_mode = EXCLUSIVE` takes at the first read is refused at once
 * (busy timeout 0) while any other connection, in any process, has the file open.
 */
function takeExclusiveLock(db: SqliteDatabase, path: string): void {
  db.pragma('busy_timeout = 0');
  db.pragma('locking_mode = EXCLUSIVE');
  try {
    db.exec('BEGIN IMMEDIATE; SELECT count(*) FROM sqlite_master; COMMIT');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') throw new StoreInUseError(path);
    throw error;
  }
}

/** True for a UNIQUE or PRIMARY KEY violation raised by the driver. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
