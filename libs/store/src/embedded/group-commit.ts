/** The slice of the connection a group commit needs. */
export interface GroupCommitConnection {
  /** Runs one statement (prepared once and cached by the handle). */
  run(sql: string): void;
  /** False once SQLite itself rolled the transaction back (a full disk, an I/O error). */
  readonly inTransaction: boolean;
}

interface QueuedWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

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
 * - durable when it resolves: promises settle only after the COMMIT returned; if the COMMIT (or
 *   an error after which SQLite rolled back the whole transaction) fails, every write of the
 *   batch rejects, and none of them was applied.
 * A caller awaits its write before its next operation, so one caller never has two writes in one
 * batch out of order; reads are not queued (a read runs at once, before any write still waiting
 * for its batch, which is a valid order for calls that overlap in time).
 */
export class GroupCommit {
  private queue: QueuedWrite[] = [];
  private scheduled = false;

  /** `connection` throws the store's "closed" error once the handle is closed. */
  constructor(private readonly connection: () => GroupCommitConnection) {}

  submit<R>(write: () => R): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // setImmediate, not a microtask: it runs after the I/O callbacks of this turn, so that the
      // writes of every request handled in the turn join the batch.
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    });
  }

  /** Commits whatever is queued now (the handle calls it before closing). */
  flush(): void {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    let settled: Settled[];
    try {
      settled = this.commit(batch);
    } catch (error) {
      for (const queued of batch) queued.reject(error);
      return;
    }
    batch.forEach((queued, i) => {
      const outcome = settled[i]!;
      if (outcome.ok) queued.resolve(outcome.value);
      else queued.reject(outcome.error);
    });
  }

  /** Throws when nothing of the batch was committed. */
  private commit(batch: readonly QueuedWrite[]): Settled[] {
    const db = this.connection();
    db.run('BEGIN IMMEDIATE');
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
