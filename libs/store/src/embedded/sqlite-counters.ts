import { prefixUpperBound } from '../prefix-range.ts';
import type { CounterAddOptions, CounterDelta, Counters } from '../store.ts';
import type { SqliteHandle } from './sqlite-handle.ts';
import { COUNTERS_TABLE_SQL } from './sqlite-layout.ts';

const UPSERT_SQL =
  'INSERT INTO counters (key, value, expires_at) VALUES (?, ?, ?) ' +
  'ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at';

/** A live row: no expiry, or one not yet passed (epoch ms bound as the second parameter). */
const LIVE = '(expires_at IS NULL OR expires_at >= ?)';

/** The prefix read, a range over the primary key's index (exported so a test can check its plan). */
export const LIST_SQL = `SELECT key, value FROM counters WHERE key >= ? AND key < ? AND ${LIVE} ORDER BY key`;
const LIST_ALL_FROM_SQL = `SELECT key, value FROM counters WHERE key >= ? AND ${LIVE} ORDER BY key`;

/** Expired rows are deleted at most this often, a bounded batch at a time, inside an expiring add. */
const PURGE_EVERY_MS = 60_000;
const PURGE_BATCH = 1_000;

interface Row {
  value: number;
  expires_at: number | null;
}

/**
 * Counters live in one `counters` table (key -> integer, optional expiry in epoch ms). `add`
 * reads and writes inside one write (`SqliteHandle.write`, under the write lock), so the limit
 * check and the write are atomic across every process sharing the file. `addMany` does all of its
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
  }

  async add(key: string, delta: number, options: CounterAddOptions = {}): Promise<{ value: number; applied: boolean }> {
    const { limit } = options;
    if (!Number.isSafeInteger(delta)) throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    if (limit !== undefined && Number.isNaN(limit)) throw new RangeError('counters: limit must be a number');
    const expiresAt = options.expiresAt === undefined ? undefined : epochMs(options.expiresAt);
    return this.db.write(() => {
      const now = this.clock().getTime();
      const current = this.live(key, now);
      const next = (current?.value ?? 0) + delta;
      if (limit !== undefined && next > limit) return { value: current?.value ?? 0, applied: false };
      if (!Number.isSafeInteger(next)) throw new RangeError(`counters: '${key}' would overflow`);
      this.db.statement(UPSERT_SQL).run(key, next, expiresAt ?? current?.expires_at ?? null);
      if (expiresAt !== undefined) this.purgeExpired(now);
      return { value: next, applied: true };
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
      const upsert = this.db.statement(UPSERT_SQL);
      for (const { key, delta } of applied) {
        const current = this.live(key, now);
        const next = (current?.value ?? 0) + delta;
        // Thrown inside the transaction: it rolls back every delta of the batch.
        if (!Number.isSafeInteger(next)) throw new RangeError(`counters: '${key}' would overflow`);
        upsert.run(key, next, current?.expires_at ?? null);
      }
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
  }
}

function epochMs(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new TypeError(`counters: expiresAt must be an ISO timestamp, got ${JSON.stringify(iso)}`);
  return ms;
}
