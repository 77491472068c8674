import type { CounterAddOptions, CounterDelta, Counters } from '../store.ts';
import { prefixUpperBound } from '../prefix-range.ts';
import type { PgHandle } from './pg-handle.ts';
import { quoteIdent } from './pg-sql.ts';

/**
 * An expired counter is purged only once it has been expired this long, so a row that an add
 * saw live (and counted on) is never deleted between the add's snapshot and its write.
 */
export const COUNTER_PURGE_GRACE_MS = 60_000;

/** Whether the row `c` (or the table's row) has expired at the clock's now, bound as `param`. */
const expired = (alias: string, param: string) => `(${alias}.expires_at IS NOT NULL AND ${alias}.expires_at < ${param})`;

/**
 * Counters are rows of one table `ap_counters` (key text COLLATE "C" primary key, value bigint,
 * expires_at timestamptz), created by the migrations. Every operation is ONE statement:
 *
 * - `add` is `INSERT ... ON CONFLICT (key) DO UPDATE ... WHERE <fits the limit> RETURNING`: the
 *   conflicting row is locked and the WHERE re-checked on its latest version, so concurrent adds
 *   from any number of processes serialize on the row and the limit is exact. An expired row
 *   counts as 0 (and is restarted by the add). Only a refused add reads the value afterwards.
 * - `addMany` is one `INSERT ... SELECT ... FROM unnest(...) ON CONFLICT DO UPDATE`: one round
 *   trip and one transaction, so the batch is all-or-nothing. Keys are summed per key (a key may
 *   repeat) and locked in key order, so two batches never deadlock each other.
 * - `list(prefix)` is a `key >= prefix AND key < bound` range on the primary key; the "C"
 *   collation compares code points, the order `prefixUpperBound` assumes.
 */
export class PgCounters implements Counters {
  readonly table: string;

  constructor(
    private readonly handle: PgHandle,
    schema: string,
    private readonly clock: () => Date,
  ) {
    this.table = `${quoteIdent(schema)}.ap_counters`;
  }

  async add(key: string, delta: number, options: CounterAddOptions = {}): Promise<{ value: number; applied: boolean }> {
    const { limit, expiresAt } = options;
    if (!Number.isSafeInteger(delta)) throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    if (limit !== undefined && Number.isNaN(limit)) throw new RangeError('counters: limit must be a number');
    const expiry = expiresAt === undefined ? null : new Date(expiresAt);
    if (expiry !== null && Number.isNaN(expiry.getTime())) {
      throw new TypeError(`counters: expiresAt must be an ISO timestamp, got ${JSON.stringify(expiresAt)}`);
    }
    const now = this.clock();
    // $1 key, $2 delta, $3 limit (null: none), $4 expiry (null: keep), $5 now.
    const fits = (current: string) => `($3::float8 IS NULL OR (${current} + $2::bigint)::float8 <= $3::float8)`;
    const live = `(SELECT 1 FROM ${this.table} l WHERE l.key = $1 AND NOT ${expired('l', '$5')})`;
    const rows = await this.write<{ value: string }>(
      `INSERT INTO ${this.table} AS c (key, value, expires_at) ` +
        // No row to create when even a fresh counter would break the limit and no live one exists.
        `SELECT $1, $2::bigint, $4::timestamptz WHERE ${fits('0')} OR EXISTS ${live} ` +
        'ON CONFLICT (key) DO UPDATE SET ' +
        `value = CASE WHEN ${expired('c', '$5')} THEN 0 ELSE c.value END + $2::bigint, ` +
        `expires_at = COALESCE($4::timestamptz, CASE WHEN ${expired('c', '$5')} THEN NULL ELSE c.expires_at END) ` +
        `WHERE ${fits(`CASE WHEN ${expired('c', '$5')} THEN 0 ELSE c.value END`)} ` +
        'RETURNING value',
      [key, delta, limit === undefined ? null : limit, expiry, now],
    );
    if (rows[0] !== undefined) return { value: Number(rows[0].value), applied: true };
    return { value: await this.get(key), applied: false };
  }

  async addMany(deltas: ReadonlyArray<CounterDelta>): Promise<void> {
    for (const { delta } of deltas) {
      if (!Number.isSafeInteger(delta)) throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    }
    const pending = deltas.filter(({ delta }) => delta !== 0);
    if (pending.length === 0) return;
    await this.write(
      `INSERT INTO ${this.table} AS c (key, value) ` +
        'SELECT k, sum(d)::bigint FROM unnest($1::text[], $2::bigint[]) AS b(k, d) GROUP BY k ORDER BY k COLLATE "C" ' +
        'ON CONFLICT (key) DO UPDATE SET ' +
        `value = CASE WHEN ${expired('c', '$3')} THEN 0 ELSE c.value END + excluded.value, ` +
        `expires_at = CASE WHEN ${expired('c', '$3')} THEN NULL ELSE c.expires_at END`,
      [pending.map((d) => d.key), pending.map((d) => d.delta), this.clock()],
    );
  }

  async get(key: string): Promise<number> {
    const rows = await this.handle.query<{ value: string }>(
      `SELECT value FROM ${this.table} c WHERE key = $1 AND NOT ${expired('c', '$2')}`,
      [key, this.clock()],
    );
    return rows[0] === undefined ? 0 : Number(rows[0].value);
  }

  async list(prefix: string): Promise<Record<string, number>> {
    const bound = prefixUpperBound(prefix);
    const rows = await this.handle.query<{ key: string; value: string }>(
      `SELECT key, value FROM ${this.table} c WHERE key >= $1 ${bound === null ? '' : 'AND key < $3 '}` +
        `AND NOT ${expired('c', '$2')} ORDER BY key`,
      bound === null ? [prefix, this.clock()] : [prefix, this.clock(), bound],
    );
    return Object.fromEntries(rows.map((row) => [row.key, Number(row.value)]));
  }

  /** A write; a value leaving the safe integers (the table's CHECK) is a RangeError, nothing written. */
  private async write<R extends object>(text: string, params: unknown[]): Promise<R[]> {
    try {
      return await this.handle.query<R & Record<string, unknown>>(text, params);
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      // 23514: the safe-integer CHECK; 22003: past bigint itself (a sum of deltas in addMany).
      if (code === '23514' || code === '22003') {
        throw new RangeError('counters: the add would overflow the largest safe integer; nothing was applied', { cause: err });
      }
      throw err;
    }
  }

  /** Deletes counters expired for longer than the grace period (the store's purge timer). */
  async purgeExpired(): Promise<void> {
    const before = new Date(this.clock().getTime() - COUNTER_PURGE_GRACE_MS);
    await this.handle.query(`DELETE FROM ${this.table} c WHERE ${expired('c', '$1')}`, [before]);
  }
}
