import { prefixUpperBound } from '../prefix-range.ts';
import type { CounterAddOptions, CounterAddResult, CounterDelta, CounterOnce, Counters, CounterWithdrawal } from '../store.ts';
import type { SqliteHandle } from './sqlite-handle.ts';
import { COUNTER_ONCE_TABLE_SQL, COUNTERS_TABLE_SQL } from './sqlite-layout.ts';

const UPSERT_SQL =
  'INSERT INTO counters (key, value, expires_at) VALUES (?, ?, ?) ' +
  'ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at';

/**
 * An add without a limit in one statement (no read first): the row's value plus the delta while it
 * is live, the delta alone once it expired (it counts from 0 again, its old expiry dropped), a
 * new expiry when `@exp` is given. `RETURNING` gives the new value. STRICT refuses the REAL that an
 * int64 overflow would produce (SQLITE_CONSTRAINT_DATATYPE).
 */
const ADD_SQL =
  'INSERT INTO counters (key, value, expires_at) VALUES (@key, @delta, @exp) ON CONFLICT(key) DO UPDATE SET ' +
  'value = CASE WHEN expires_at IS NULL OR expires_at >= @now THEN value + excluded.value ELSE excluded.value END, ' +
  'expires_at = COALESCE(@exp, CASE WHEN expires_at IS NULL OR expires_at >= @now THEN expires_at END) ' +
  'RETURNING value';

/** A live row: no expiry, or one not yet passed (epoch ms bound as the second parameter). */
const LIVE = '(expires_at IS NULL OR expires_at >= ?)';

/** The prefix read, a range over the primary key's index (exported so a test can check its plan). */
export const LIST_SQL = `SELECT key, value FROM counters WHERE key >= ? AND key < ? AND ${LIVE} ORDER BY key`;
const LIST_ALL_FROM_SQL = `SELECT key, value FROM counters WHERE key >= ? AND ${LIVE} ORDER BY key`;

/** Expired rows are deleted at most this often, a bounded batch at a time, inside an expiring add. */
const PURGE_EVERY_MS = 60_000;
const PURGE_BATCH = 1_000;

/** Records the use of an idempotent add's id (replacing a forgotten, expired use of it). */
const ONCE_UPSERT_SQL = 'INSERT OR REPLACE INTO counter_once (id, key, delta, state, expires_at) VALUES (?, ?, ?, ?, ?)';

interface OnceRow {
  key: string | null;
  delta: number;
  state: 'applied' | 'withdrawn' | 'prevented';
}

interface Row {
  value: number;
  expires_at: number | null;
}

/**
 * Counters live in one `counters` table (key -> integer, optional expiry in epoch ms). `add`
 * reads and writes inside one write (`SqliteHandle.write`, under the write lock), so the limit
 * check and the write are atomic across every process sharing the file; an add under an id
 * (`once`) and a withdrawal read and write `counter_once` in that same write. `addMany` does all of its
 * keys in one write: all or nothing. An expired counter reads as 0 at once; its row is deleted by
 * the purge that expiring adds run at most once a minute, a bounded batch at a time (indexed), so
 * rate-limit windows do not pile up. Prefix reads are key ranges, which the primary key serves.
 */
export class SqliteCounters implements Counters {
  private lastPurgeMs = 0;

  constructor(
    private readonly db: SqliteHandle,
    private readonly clock: () => Date,
  ) {
    db.exec(COUNTERS_TABLE_SQL[0]!);
    // Files written before counters could expire lack the column: add it (once, whoever opens first).
    const columns = db.statement("SELECT name FROM pragma_table_info('counters')").all() as { name: string }[];
    if (!columns.some((c) => c.name === 'expires_at')) {
      try {
        db.exec('ALTER TABLE counters ADD COLUMN expires_at INTEGER');
      } catch (error) {
        if (!/duplicate column/i.test(String((error as Error).message))) throw error;
      }
    }
    db.exec(COUNTERS_TABLE_SQL[1]!);
    for (const sql of COUNTER_ONCE_TABLE_SQL) db.exec(sql);
  }

  async add(key: string, delta: number, options: CounterAddOptions = {}): Promise<CounterAddResult> {
    const { limit, once } = options;
    if (!Number.isSafeInteger(delta)) throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    if (limit !== undefined && Number.isNaN(limit)) throw new RangeError('counters: limit must be a number');
    const expiresAt = options.expiresAt === undefined ? undefined : epochMs(options.expiresAt);
    const until = once === undefined ? undefined : epochMs(once.until);
    return this.db.write((): CounterAddResult => {
      const now = this.clock().getTime();
      // An id used before (applied, withdrawn or prevented) and still remembered: nothing changes.
      if (once !== undefined && this.onceRow(once.id, now) !== undefined) return { value: this.live(key, now)?.value ?? 0, applied: false, repeated: true };
      const result = limit === undefined ? { value: this.addRow(key, delta, now, expiresAt ?? null), applied: true } : this.addWithin(key, delta, limit, now, expiresAt);
      if (once !== undefined && result.applied) this.db.statement(ONCE_UPSERT_SQL).run(once.id, key, delta, 'applied', until!);
      if (expiresAt !== undefined || once !== undefined) this.purgeExpired(now);
      return result;
    });
  }

  async withdraw(once: CounterOnce): Promise<CounterWithdrawal> {
    const until = epochMs(once.until);
    return this.db.write((): CounterWithdrawal => {
      const now = this.clock().getTime();
      const row = this.onceRow(once.id, now);
      if (row === undefined) {
        this.db.statement(ONCE_UPSERT_SQL).run(once.id, null, 0, 'prevented', until);
        return 'prevented';
      }
      if (row.state !== 'applied' || row.key === null) return 'already';
      this.addRow(row.key, -row.delta, now, null);
      this.db.statement("UPDATE counter_once SET state = 'withdrawn' WHERE id = ?").run(once.id);
      return 'withdrawn';
    });
  }

  async addMany(deltas: ReadonlyArray<CounterDelta>): Promise<void> {
    for (const { delta } of deltas) {
      if (!Number.isSafeInteger(delta)) throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    }
    const applied = deltas.filter(({ delta }) => delta !== 0);
    if (applied.length === 0) return;
    await this.db.write(() => {
      const now = this.clock().getTime();
      // Thrown inside the transaction, an overflow rolls back every delta of the batch.
      for (const { key, delta } of applied) this.addRow(key, delta, now, null);
    });
  }

  async get(key: string): Promise<number> {
    return this.live(key, this.clock().getTime())?.value ?? 0;
  }

  async list(prefix: string): Promise<Record<string, number>> {
    const now = this.clock().getTime();
    const bound = prefixUpperBound(prefix);
    const rows = (
      bound === null ? this.db.statement(LIST_ALL_FROM_SQL).all(prefix, now) : this.db.statement(LIST_SQL).all(prefix, bound, now)
    ) as { key: string; value: number }[];
    return Object.fromEntries(rows.map((row) => [row.key, row.value]));
  }

  /** Inside a write: adds `delta` in one statement (ADD_SQL) and returns the new value; throws on overflow. */
  private addRow(key: string, delta: number, now: number, expiresAt: number | null): number {
    let value: number;
    try {
      value = (this.db.statement(ADD_SQL).get({ key, delta, now, exp: expiresAt }) as { value: number }).value;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_DATATYPE') throw new RangeError(`counters: '${key}' would overflow`, { cause: error });
      throw error;
    }
    // Past 2^53 the value is exact in SQLite but not in JavaScript: refused like an int64 overflow.
    if (!Number.isSafeInteger(value)) throw new RangeError(`counters: '${key}' would overflow`);
    return value;
  }

  /** Inside a write: the add under `limit` (a read, then the row written only when it fits). */
  private addWithin(key: string, delta: number, limit: number, now: number, expiresAt: number | undefined): CounterAddResult {
    const current = this.live(key, now);
    const next = (current?.value ?? 0) + delta;
    if (next > limit) return { value: current?.value ?? 0, applied: false };
    if (!Number.isSafeInteger(next)) throw new RangeError(`counters: '${key}' would overflow`);
    this.db.statement(UPSERT_SQL).run(key, next, expiresAt ?? current?.expires_at ?? null);
    return { value: next, applied: true };
  }

  /** The remembered use of an idempotent add's id, unless absent or past its `until`. */
  private onceRow(id: string, now: number): OnceRow | undefined {
    return this.db.statement('SELECT key, delta, state FROM counter_once WHERE id = ? AND expires_at >= ?').get(id, now) as OnceRow | undefined;
  }

  /** The counter's row unless absent or expired (an expired one counts from 0 again). */
  private live(key: string, now: number): Row | undefined {
    return this.db.statement(`SELECT value, expires_at FROM counters WHERE key = ? AND ${LIVE}`).get(key, now) as Row | undefined;
  }

  /** Runs inside a write: deletes a bounded batch of expired rows, at most once per PURGE_EVERY_MS. */
  private purgeExpired(now: number): void {
    if (now - this.lastPurgeMs < PURGE_EVERY_MS) return;
    this.lastPurgeMs = now;
    this.db
      .statement('DELETE FROM counters WHERE rowid IN (SELECT rowid FROM counters WHERE expires_at < ? LIMIT ?)')
      .run(now, PURGE_BATCH);
    this.db
      .statement('DELETE FROM counter_once WHERE rowid IN (SELECT rowid FROM counter_once WHERE expires_at < ? LIMIT ?)')
      .run(now, PURGE_BATCH);
  }
}

function epochMs(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new TypeError(`counters: expiresAt must be an ISO timestamp, got ${JSON.stringify(iso)}`);
  return ms;
}
