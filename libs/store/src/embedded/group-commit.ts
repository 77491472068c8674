/** The slice of the connection a group commit needs. */
export interface GroupCommitConnection {
  /** Runs one statement (prepared once and cached by the handle). */
  run(sql: string): void;
  /**
   * `BEGIN IMMEDIATE` without waiting: false when another connection (another process) holds
   * the write lock. `wait` true: block up to the connection's busy timeout instead (closing).
   */
  begin(wait: boolean): boolean;
  /** False once SQLite itself rolled the transaction back (a full disk, an I/O error). */
  readonly inTransaction: boolean;
}

interface QueuedWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface GroupCommitOptions {
  /** How long a batch may wait for another process's write lock before its writes fail. */
  lockTimeoutMs: number;
}

/** Waits between attempts at the write lock while another process holds it: short, then capped. */
const LOCK_RETRY_MS = [0, 0, 1, 1, 2, 4, 8] as const;

/**
 * Group commit: the writes submitted during one turn of the event loop share one `BEGIN
 * IMMEDIATE ... COMMIT`, each inside its own savepoint.
 *
 * Why: in WAL mode the commit, not the statements, is most of a small write's cost (file locks
 * taken and released, WAL frames and header written), and a busy api makes several writes per
 * request from many requests at once. Sharing the commit keeps every guarantee of the store port:
 * - atomic per write: a write that throws is rolled back to its savepoint and rejects with its
 *   own error; the others of the batch are unaffected;
 * - isolated and linearizable: the database-wide write lock is held from the first write's reads
 *   to the commit, and the writes run one after the other in submission order, each seeing the
 *   ones before it (a log tip, a counter value, a document version);
 * - committed when it resolves: promises settle only after the COMMIT returned; if the COMMIT
 *   (or an error after which SQLite rolled back the whole transaction) fails, every write of the
 *   batch rejects, and none of them was applied. How durable a resolved write is depends on the
 *   connection's `synchronous` setting, `[storage] durability` (sqlite-handle.ts): with `full`
 *   (the default) the COMMIT returns after the WAL was synced to disk, so a resolved write
 *   survives an OS crash or a power loss; with `normal` it survives a crash of the process only.
 * A write submitted while a batch runs (from inside another write's function) is refused at once:
 * it would run outside the transaction it seems to belong to, after it.
 * A caller awaits its write before its next operation, so one caller never has two writes in one
 * batch out of order; reads are not queued (a read runs at once, before any write still waiting
 * for its batch, which is a valid order for calls that overlap in time).
 *
 * When other processes share the file (a fleet on one host), the write lock is often held by one
 * of them. SQLite's own busy handler would wait for it by sleeping, with this process's event
 * loop blocked all the while (measured: a quarter of a millisecond per commit on average, an
 * eighth of an api node's time). Instead the lock is tried without waiting, and on failure the
 * batch stays queued and is tried again a moment later from a timer, the event loop serving
 * requests (and reads) meanwhile; the writes they submit join the waiting batch. Only after
 * `lockTimeoutMs` without the lock do the batch's writes fail.
 */
export class GroupCommit {
  private queue: QueuedWrite[] = [];
  private scheduled = false;
  /** When the queued batch first failed to get the lock; null while it has not. */
  private waitingSince: number | null = null;
  private attempts = 0;
  /** True while a batch's write functions run (they must not submit writes of their own). */
  private running = false;

  /** `connection` throws the store's "closed" error once the handle is closed. */
  constructor(
    private readonly connection: () => GroupCommitConnection,
    private readonly options: GroupCommitOptions,
  ) {}

  submit<R>(write: () => R): Promise<R> {
    if (this.running) {
      return Promise.reject(
        new Error('embedded store: a write was submitted from inside another write; make it after that write has resolved'),
      );
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // setImmediate, not a microtask: it runs after the I/O callbacks of this turn, so that the
      // writes of every request handled in the turn join the batch.
      setImmediate(() => this.attempt());
    });
  }

  /** Commits whatever is queued now, waiting for the lock if it must (the handle closes next). */
  flush(): void {
    this.commitQueued(true);
  }

  private attempt(): void {
    if (this.commitQueued(false)) {
      this.scheduled = false;
      this.waitingSince = null;
      this.attempts = 0;
      return;
    }
    const now = Date.now();
    this.waitingSince ??= now;
    if (now - this.waitingSince >= this.options.lockTimeoutMs) {
      this.scheduled = false;
      this.waitingSince = null;
      this.attempts = 0;
      this.failQueued(new Error(`embedded store: the write lock was held by another process for over ${this.options.lockTimeoutMs} ms`));
      return;
    }
    const delay = LOCK_RETRY_MS[Math.min(this.attempts++, LOCK_RETRY_MS.length - 1)]!;
    if (delay === 0) setImmediate(() => this.attempt());
    else setTimeout(() => this.attempt(), delay);
  }

  /** False when the lock was taken by another connection and `wait` was false: nothing was taken from the queue. */
  private commitQueued(wait: boolean): boolean {
    if (this.queue.length === 0) return true;
    let db: GroupCommitConnection;
    try {
      db = this.connection();
      if (!db.begin(wait)) return false;
    } catch (error) {
      this.failQueued(error);
      return true;
    }
    const batch = this.queue;
    this.queue = [];
    let settled: Settled[];
    this.running = true;
    try {
      settled = commit(db, batch);
    } catch (error) {
      for (const queued of batch) queued.reject(error);
      return true;
    } finally {
      this.running = false;
    }
    batch.forEach((queued, i) => {
      const outcome = settled[i]!;
      if (outcome.ok) queued.resolve(outcome.value);
      else queued.reject(outcome.error);
    });
    return true;
  }

  private failQueued(error: unknown): void {
    const batch = this.queue;
    this.queue = [];
    for (const queued of batch) queued.reject(error);
  }
}

/** Runs the batch inside the transaction `begin` opened. Throws when nothing of it was committed. */
function commit(db: GroupCommitConnection, batch: readonly QueuedWrite[]): Settled[] {
  try {
    // A lone write needs no savepoint: its failure rolls back the transaction, which is all it wrote.
    const settled =
      batch.length === 1
        ? [{ ok: true as const, value: batch[0]!.write() }]
        : batch.map((queued) => inSavepoint(db, queued.write));
    db.run('COMMIT');
    return settled;
  } catch (error) {
    if (db.inTransaction) {
      try {
        db.run('ROLLBACK');
      } catch {
        // The connection is unusable; the batch fails with the original error either way.
      }
    }
    throw error;
  }
}

function inSavepoint(db: GroupCommitConnection, write: () => unknown): Settled {
  db.run('SAVEPOINT write');
  try {
    const value = write();
    db.run('RELEASE write');
    return { ok: true, value };
  } catch (error) {
    // SQLite already rolled back the whole transaction: the earlier writes of the batch are gone too.
    if (!db.inTransaction) throw error;
    db.run('ROLLBACK TO write');
    db.run('RELEASE write');
    return { ok: false, error };
  }
}
