/**
 * The store port: the document operations our domain needs, so that the embedded (SQLite) and
 * the distributed (MongoDB, PostgreSQL) adapters can all be thin. Domain repositories (api keys, audit
 * trail, vault, later agents, runs, schedules...) are written against this port only.
 *
 * Guarantees every adapter must give (pinned by the store conformance suite in
 * `@agent-platform/testkit`):
 * - Documents are JSON objects with a string `id`, unique within a collection.
 * - Every stored document has a `version` that starts at 1 and grows by one on each write;
 *   `replace`/`delete` with an `expectedVersion` fail with `StoreConflictError` when it differs
 *   (optimistic concurrency); `update` is a read-modify-write that loses no concurrent change.
 * - A collection opened with `ttlField` hides documents whose ttl timestamp (ISO string) is in
 *   the past and eventually purges them.
 * - `AppendLog.append` is linearizable across every process sharing the store: each entry gets
 *   `seq` = previous `seq` + 1 with no gaps and no forks, and the builder sees the true tip.
 * - `AppendLog.dropBefore` removes old entries (retention) but never the newest one, so seq
 *   numbering continues after it whatever is removed, and appends racing with it lose nothing.
 * - `Counters.add` is atomic across processes; with a `limit` it never lets the value exceed it.
 *   `Counters.addMany` applies each of its deltas atomically (no increment is ever lost), in one
 *   round trip; whether the batch as a whole is all-or-nothing depends on the adapter.
 * - Everything survives a process restart.
 */
export interface Store {
  /** Opens (creating if needed) a collection. Idempotent; cheap to call repeatedly. */
  collection<T extends Doc>(name: string, options?: CollectionOptions<T>): Collection<T>;
  /** Opens (creating if needed) an append-only sequenced log, e.g. the audit chain. */
  log<T extends object>(name: string, options?: LogOptions<T>): AppendLog<T>;
  /** Named atomic integer counters (budgets, rate limits). */
  readonly counters: Counters;
  health(): Promise<EngineHealth>;
  close(): Promise<void>;
}

export interface Doc {
  id: string;
}

export interface Versioned<T> {
  doc: T;
  version: number;
}

export interface CollectionOptions<T> {
  /** Top-level fields that `find` filters on often; adapters index them. */
  indexes?: ReadonlyArray<{ field: keyof T & string; unique?: boolean }>;
  /** Top-level field holding an ISO timestamp after which the document is gone. */
  ttlField?: keyof T & string;
  /**
   * Read on every request, written rarely (API keys, agents, the catalog): an adapter may keep
   * answers in memory between writes, always as fresh as the database. The embedded and PostgreSQL
   * stores do (for collections without `ttlField`), and hand out frozen documents: change a copy.
   */
  readMostly?: boolean;
}

/** Equality filter on top-level fields. `null` matches a missing or null field. */
export type Where<T> = { [K in keyof T]?: T[K] extends string | number | boolean | null | undefined ? T[K] | null : never };

export interface FindQuery<T> {
  where?: Where<T>;
  orderBy?: { field: keyof T & string; direction?: 'asc' | 'desc' };
  limit?: number;
  offset?: number;
}

export interface Collection<T extends Doc> {
  get(id: string): Promise<Versioned<T> | null>;
  /** Inserts a new document; `StoreDuplicateError` when the id (or a unique index) exists. */
  insert(doc: T): Promise<Versioned<T>>;
  /** Replaces an existing document; `StoreConflictError` when the version differs or it is gone. */
  replace(doc: T, expectedVersion: number): Promise<Versioned<T>>;
  /** Inserts or replaces without a version check (last writer wins). */
  upsert(doc: T): Promise<Versioned<T>>;
  /**
   * Read-modify-write of one document as one step: `change` gets the current document (null when
   * absent) and returns the document to store (same id), or null to write nothing. Concurrent
   * updates of a document are each applied exactly once, none lost, whatever process makes them.
   * `change` may be called more than once (an adapter without a lock re-reads and calls it again
   * when another writer got there first), so it must be pure; an error it throws rejects the
   * update with nothing written. Resolves to the document as stored afterwards (the current one
   * when `change` returned null; null when it stays absent). Creating the document can still hit
   * a unique index (`StoreDuplicateError`); an adapter that retries gives up after many attempts
   * in a row with `StoreConflictError`.
   */
  update(id: string, change: (current: Versioned<T> | null) => T | null): Promise<Versioned<T> | null>;
  /** Deletes; returns false when absent. With `expectedVersion`, `StoreConflictError` on mismatch. */
  delete(id: string, expectedVersion?: number): Promise<boolean>;
  find(query?: FindQuery<T>): Promise<Versioned<T>[]>;
  count(where?: Where<T>): Promise<number>;
}

export interface LogOptions<T> {
  /** Top-level fields `list` filters on; adapters index them. */
  indexes?: ReadonlyArray<keyof T & string>;
}

export interface LogTip {
  seq: number;
  entry: Record<string, unknown>;
}

export type LogEntry<T> = T & { seq: number };

export interface LogListQuery<T> {
  where?: Where<T>;
  /** Lower bound (inclusive) on a string field compared lexically, e.g. ISO timestamps. */
  since?: { field: keyof T & string; value: string };
  /** Newest first by default. */
  order?: 'asc' | 'desc';
  limit?: number;
}

export interface AppendLog<T extends object> {
  /**
   * Appends one entry. `build` receives the current tip (null for an empty log) and returns the
   * entry to store; it may be called more than once if another writer got there first, so it
   * must be pure. The stored entry gets `seq` = tip.seq + 1 (1 for the first).
   */
  append(build: (tip: LogEntry<T> | null) => T): Promise<LogEntry<T>>;
  tip(): Promise<LogEntry<T> | null>;
  count(): Promise<number>;
  list(query?: LogListQuery<T>): Promise<LogEntry<T>[]>;
  /** Entries with `seq` >= `fromSeq` in ascending order, at most `limit` (for chain walks). */
  scan(fromSeq: number, limit: number): Promise<LogEntry<T>[]>;
  /**
   * Removes old entries (retention, docs/retention.md): every entry with `fromSeq` <= seq <
   * `beforeSeq` (`fromSeq` defaults to 1) whose seq is not listed in `keep`, in one write, and
   * resolves to how many were removed. Removing what is already gone is a no-op (a re-run after a
   * crash finishes the job). The newest entry is **never** removed, whatever `beforeSeq` says: the
   * next append continues from its seq (no log ever starts again at 1), and an append racing with
   * the removal is neither lost nor renumbered. Other entries keep their seq: `scan`, `list` and
   * `count` simply no longer see the removed ones. Callers keep `keep` small (one batch of held
   * entries); removing a large prefix is done in several calls so no write holds the store long.
   */
  dropBefore(beforeSeq: number, options?: DropOptions): Promise<number>;
}

/** Options of `AppendLog.dropBefore`. */
export interface DropOptions {
  /** Lowest seq considered (inclusive); default 1. */
  fromSeq?: number;
  /** Seqs inside the range that stay (entries under a legal hold). */
  keep?: readonly number[];
}

/** Options of `Counters.add`. */
export interface CounterAddOptions {
  /** The add is refused (applied: false, value unchanged) when the result would exceed it. */
  limit?: number;
  /**
   * ISO timestamp after which the counter is gone: it reads 0, is not listed, the next add starts
   * from 0, and the adapter eventually deletes it. Each add that gives one sets the counter's
   * expiry; an add without one keeps whatever expiry the counter has (none: it never expires).
   */
  expiresAt?: string;
  /**
   * Makes the add idempotent under an id: it applies at most once per id, and only while the id
   * has not been used (applied, or withdrawn by `Counters.withdraw`). A repeated add changes
   * nothing and answers `applied: false, repeated: true` with the counter's value. An add refused
   * by its limit does not use the id. The id is remembered until `once.until`.
   */
  once?: CounterOnce;
}

/** The id of an idempotent add (`CounterAddOptions.once`, `Counters.withdraw`). */
export interface CounterOnce {
  id: string;
  /** ISO timestamp until which the id is remembered (after it, the id may be used again). */
  until: string;
}

/** What `Counters.withdraw` did. */
export type CounterWithdrawal =
  /** The add made under the id was applied: its delta was given back, once. */
  | 'withdrawn'
  /** No add was made under the id: the id is used up, so none ever will be. */
  | 'prevented'
  /** The id was withdrawn (or prevented) before: nothing changed. */
  | 'already';

/** What `Counters.add` did. */
export interface CounterAddResult {
  value: number;
  applied: boolean;
  /** Present (true) when an add under the same `once` id was made or withdrawn before: nothing changed. */
  repeated?: true;
}

/** One increment of `Counters.addMany`. */
export interface CounterDelta {
  key: string;
  /** An integer; may be negative. A zero delta is skipped. */
  delta: number;
}

export interface Counters {
  /**
   * Adds `delta` (may be negative) to the counter and returns the new value. With `limit`, the
   * add is refused (applied: false, value unchanged) when the result would exceed it. With
   * `expiresAt`, the counter expires then (CounterAddOptions): rate-limit windows and the like
   * leave nothing behind.
   */
  add(key: string, delta: number, options?: CounterAddOptions): Promise<CounterAddResult>;
  /**
   * Undoes the idempotent add made under `once.id`, atomically and at most once, whoever calls it
   * and however often: the delta it applied is given back ('withdrawn'); when no add was made
   * under the id, the id is used up so that a later add under it changes nothing ('prevented').
   * This is how two processes that may each be the one to settle a reservation (a worker and the
   * requester that gave up on it) settle it exactly once, whichever of them dies where
   * (docs/invocation.md "A worker that dies").
   */
  withdraw(once: CounterOnce): Promise<CounterWithdrawal>;
  /**
   * Adds every delta, in one round trip (one transaction in SQLite, one bulk write in MongoDB,
   * one statement in PostgreSQL), for bookkeeping that moves several counters at once (agent
   * stats, usage totals). Unlike `add` there is no limit and no value is returned: callers that
   * need either use `add`.
   *
   * Guarantees: each delta is applied exactly once and atomically (concurrent adds to the same
   * key, from any process, are never lost); zero deltas are skipped and an empty list makes no
   * round trip; a delta that is not a safe integer rejects the whole call before anything is
   * written; a key may appear more than once. What the port does NOT promise is that the batch
   * is all-or-nothing: the embedded adapter applies it in one transaction and the PostgreSQL
   * adapter in one statement (its own transaction), so with those a reader sees all of it or
   * none of it, and a failure (a lost connection included) leaves every counter unchanged; but
   * MongoDB applies each key on its own, so an error part-way (a lost connection) can leave some
   * deltas applied.
   * Callers must therefore not rely on the counters of one batch being consistent with each
   * other at every instant, only on each being exact once the call has resolved.
   */
  addMany(deltas: ReadonlyArray<CounterDelta>): Promise<void>;
  /** The value, 0 for an absent or expired counter. */
  get(key: string): Promise<number>;
  /**
   * All live counters whose key starts with `prefix` (every one for ''), read through the key
   * index as a range, never a scan of all counters.
   */
  list(prefix: string): Promise<Record<string, number>>;
}

export interface EngineHealth {
  /** Adapter technology, e.g. `embedded`, `mongodb`, `nats`, `bullmq`. */
  kind: string;
  status: 'ok' | 'down';
  detail?: string;
}

/** Raised by `insert` when the id or a unique index value already exists. */
export class StoreDuplicateError extends Error {
  constructor(
    readonly collection: string,
    readonly id: string,
  ) {
    super(`${collection}: document '${id}' already exists`);
    this.name = 'StoreDuplicateError';
  }
}

/** Raised by `replace`/`delete` when the expected version does not match the stored one. */
export class StoreConflictError extends Error {
  constructor(
    readonly collection: string,
    readonly id: string,
  ) {
    super(`${collection}: document '${id}' was changed concurrently`);
    this.name = 'StoreConflictError';
  }
}
