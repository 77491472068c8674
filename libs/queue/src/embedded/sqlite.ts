import { createRequire } from 'node:module';

/**
 * The slice of better-sqlite3 this adapter uses. The package ships no type declarations and
 * `@types/better-sqlite3` is not installed, so it is typed here, narrowly, rather than left `any`.
 */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

export interface SqliteTransaction<A extends unknown[], R> {
  /** Runs inside `BEGIN IMMEDIATE`: takes the write lock up front, so two processes never both read a job as due. */
  immediate(...args: A): R;
}

export interface SqliteDatabase {
  readonly open: boolean;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  exec(source: string): void;
  prepare(source: string): SqliteStatement;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  close(): void;
}

type SqliteConstructor = new (path: string) => SqliteDatabase;

const require = createRequire(import.meta.url);

/**
 * Opens (creating if needed) a SQLite file set up for several processes sharing it. `durability`
 * is `[storage] durability`, as for the store: `full` syncs every commit (an added job or
 * schedule survives a power loss once `add` resolved), `normal` only at checkpoints.
 */
export function openSqlite(path: string, durability: 'full' | 'normal' = 'full'): SqliteDatabase {
  const Database = require('better-sqlite3') as SqliteConstructor;
  const db = new Database(path);
  // WAL lets readers and one writer work at once; busy_timeout makes a second process wait for
  // the write lock instead of failing with SQLITE_BUSY.
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  return db;
}
