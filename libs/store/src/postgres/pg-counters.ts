import { onceUntil } from '../counter-once.ts';
import type { PoolClient } from 'pg';
import type { CounterAddOptions, CounterAddResult, CounterDelta, CounterOnce, Counters, CounterWithdrawal } from '../store.ts';
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
 * expires_at timestamptz), created by the migrations. Each operation is ONE statement but those under an id:
 *
 * - `add` is `INSERT ... ON CONFLICT (key) DO UPDATE ... WHERE <fits the limit> RETURNING`: the
 *   conflicting row is locked and the WHERE re-checked on its latest version, so concurrent adds
 *   from any number of processes serialize on the row and the limit is exact. An expired row
 *   counts as 0 (and is restarted by the add). Only a refused add reads the value afterwards.
 * - `addMany` is one `INSERT ... SELECT ... FROM unnest(...) ON CONFLICT DO UPDATE`: one round
 *   trip and one transaction, so the batch is all-or-nothing. Keys are summed per key (a key may
 *   repeat) and locked in key order, so two batches never deadlock each other. The calls made in
 *   one turn of the event loop go as one such statement (`applyBatch`).
 * - an add under an id (`once`) and a withdrawal are one transaction over `ap_counter_once` and the
 *   counter (migration 2): the id claimed first, so a concurrent call under it waits, then sees it.
 * - `list(prefix)` is a `key >= prefix AND key < bound` range on the primary key; the "C"
 *   collation compares code points, the order `prefixUpperBound` assumes.
 */
export class PgCounters implements Counters {
  readonly table: string;
  private readonly onceTable: string;
  /** The add: $1 key, $2 delta, $3 limit (null: none), $4 expiry (null: keep), $5 now. */
  private readonly addSql: string;
  /**
   * Claims an idempotent add's id: $1 id, $2 key, $3 delta, $4 state, $5 until, $6 now. A row only
   * when the id is unused (or its use was forgotten, past its until).
   */
  private readonly claimSql: string;
  /** The `addMany` calls waiting for this turn's statement (`applyBatch`). */
  private batch: Array<{ deltas: CounterDelta[]; resolve: () => void; reject: (err: unknown) => void }> | null = null;

  constructor(
    private readonly handle: PgHandle,
    schema: string,
    private readonly clock: () => Date,
  ) {
    this.table = `${quoteIdent(schema)}.ap_counters`;
    this.onceTable = `${quoteIdent(schema)}.ap_counter_once`;
    const fits = (current: string) => `($3::float8 IS NULL OR (${current} + $2::bigint)::float8 <= $3::float8)`;
    const live = `(SELECT 1 FROM ${this.table} l WHERE l.key = $1 AND NOT ${expired('l', '$5')})`;
    this.addSql =
      `INSERT INTO ${this.table} AS c (key, value, expires_at) ` +
      // No row to create when even a fresh counter would break the limit and no live one exists.
      `SELECT $1, $2::bigint, $4::timestamptz WHERE ${fits('0')} OR EXISTS ${live} ` +
      'ON CONFLICT (key) DO UPDATE SET ' +
      `value = CASE WHEN ${expired('c', '$5')} THEN 0 ELSE c.value END + $2::bigint, ` +
      `expires_at = COALESCE($4::timestamptz, CASE WHEN ${expired('c', '$5')} THEN NULL ELSE c.expires_at END) ` +
      `WHERE ${fits(`CASE WHEN ${expired('c', '$5')} THEN 0 ELSE c.value END`)} ` +
      'RETURNING value';
    this.claimSql =
      `INSERT INTO ${this.onceTable} AS o (id, key, delta, state, expires_at) VALUES ($1, $2, $3::bigint, $4, $5::timestamptz) ` +
      'ON CONFLICT (id) DO UPDATE SET key = excluded.key, delta = excluded.delta, state = excluded.state, expires_at = excluded.expires_at ' +
      'WHERE o.expires_at < $6::timestamptz RETURNING id';
  }

  async add(key: string, delta: number, options: CounterAddOptions = {}): Promise<CounterAddResult> {
    const { limit, expiresAt, once } = options;
    if (!Number.isSafeInteger(delta)) throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    if (limit !== undefined && Number.isNaN(limit)) throw new RangeError('counters: limit must be a number');
    const expiry = expiresAt === undefined ? null : new Date(expiresAt);
    if (expiry !== null && Number.isNaN(expiry.getTime())) {
      throw new TypeError(`counters: expiresAt must be an ISO timestamp, got ${JSON.stringify(expiresAt)}`);
    }
    const params = [key, delta, limit === undefined ? null : limit, expiry, this.clock()];
    if (once === undefined) {
      const rows = await this.write<{ value: string }>(this.addSql, params);
      if (rows[0] !== undefined) return { value: Number(rows[0].value), applied: true };
      return { value: await this.get(key), applied: false };
    }
    // One transaction: the id is claimed first (a concurrent add under the same id waits on it and
    // then finds it used), the add made, and both rolled back when the limit refuses the add.
    const until = onceUntil(once);
    const outcome = await this.inTransaction(async (client) => {
      const claimed = await client.query(this.claimSql, [once.id, key, delta, 'applied', until, this.clock()]);
      if (claimed.rowCount === 0) return { kind: 'repeated' as const };
      const rows = (await client.query<{ value: string }>(this.addSql, params)).rows;
      if (rows[0] === undefined) throw new RolledBack();
      return { kind: 'applied' as const, value: Number(rows[0].value) };
    }).catch((err: unknown) => {
      if (err instanceof RolledBack) return { kind: 'refused' as const };
      throw err;
    });
    if (outcome.kind === 'applied') return { value: outcome.value, applied: true };
    const value = await this.get(key);
    return outcome.kind === 'repeated' ? { value, applied: false, repeated: true } : { value, applied: false };
  }

  async withdraw(once: CounterOnce): Promise<CounterWithdrawal> {
    const until = onceUntil(once);
    return this.inTransaction(async (client): Promise<CounterWithdrawal> => {
      // Claimed as prevented when no add was made under the id; else the row is locked and read.
      const claimed = await client.query(this.claimSql, [once.id, null, 0, 'prevented', until, this.clock()]);
      if (claimed.rowCount === 1) return 'prevented';
      const { rows } = await client.query<{ key: string | null; delta: string; state: string }>(
        `SELECT key, delta, state FROM ${this.onceTable} WHERE id = $1 FOR UPDATE`,
        [once.id],
      );
      const row = rows[0];
      if (row === undefined || row.state !== 'applied' || row.key === null) return 'already';
      await client.query(`UPDATE ${this.onceTable} SET state = 'withdrawn' WHERE id = $1`, [once.id]);
      await client.query(this.addSql, [row.key, -Number(row.delta), null, null, this.clock()]);
      return 'withdrawn';
    });
  }

  async addMany(deltas: ReadonlyArray<CounterDelta>): Promise<void> {
    for (const { delta } of deltas) {
      if (!Number.isSafeInteger(delta)) throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    }
    const pending = deltas.filter(({ delta }) => delta !== 0);
    if (pending.length === 0) return;
    return new Promise<void>((resolve, reject) => {
      if (this.batch === null) {
        this.batch = [];
        setImmediate(() => void this.applyBatch());
      }
      this.batch.push({ deltas: pending, resolve, reject });
    });
  }

  /**
   * The `addMany` calls of one turn of the event loop (a request's bookkeeping, and other
   * requests' finishing in the same turn) as one statement: all of them or none applied. When the
   * server refuses it for a value (an add past the safe integer range), nothing was applied and
   * each call is applied alone, so only the one that overflows fails; any other error (a lost
   * connection, a timeout) fails them all, and none is sent again (it may have been applied).
   */
  private async applyBatch(): Promise<void> {
    const calls = this.batch ?? [];
    this.batch = null;
    try {
      await this.addAll(calls.flatMap((call) => call.deltas));
      for (const call of calls) call.resolve();
    } catch (err) {
      if (calls.length > 1 && err instanceof RangeError) {
        await Promise.all(calls.map((call) => this.addAll(call.deltas).then(call.resolve, call.reject)));
        return;
      }
      for (const call of calls) call.reject(err);
    }
  }

  private async addAll(deltas: CounterDelta[]): Promise<void> {
    await this.write(
      `INSERT INTO ${this.table} AS c (key, value) ` +
        'SELECT k, sum(d)::bigint FROM unnest($1::text[], $2::bigint[]) AS b(k, d) GROUP BY k ORDER BY k COLLATE "C" ' +
        'ON CONFLICT (key) DO UPDATE SET ' +
        `value = CASE WHEN ${expired('c', '$3')} THEN 0 ELSE c.value END + excluded.value, ` +
        `expires_at = CASE WHEN ${expired('c', '$3')} THEN NULL ELSE c.expires_at END`,
      [deltas.map((d) => d.key), deltas.map((d) => d.delta), this.clock()],
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

  /** `fn` in one transaction, with the overflow translation of `write`. */
  private async inTransaction<R>(fn: (client: PoolClient) => Promise<R>): Promise<R> {
    try {
      return await this.handle.transaction(fn);
    } catch (err) {
      throw overflowOr(err);
    }
  }

  /** A write; a value leaving the safe integers (the table's CHECK) is a RangeError, nothing written. */
  private async write<R extends object>(text: string, params: unknown[]): Promise<R[]> {
    try {
      return await this.handle.query<R & Record<string, unknown>>(text, params);
    } catch (err) {
      throw overflowOr(err);
    }
  }

  /** Deletes counters expired for longer than the grace period (the store's purge timer). */
  async purgeExpired(): Promise<void> {
    const before = new Date(this.clock().getTime() - COUNTER_PURGE_GRACE_MS);
    await this.handle.query(`DELETE FROM ${this.table} c WHERE ${expired('c', '$1')}`, [before]);
    await this.handle.query(`DELETE FROM ${this.onceTable} WHERE expires_at < $1`, [before]);
  }
}

/** Thrown inside a transaction to roll it back when a limited add under an id was refused. */
class RolledBack extends Error {}

/** 23514 (the safe-integer CHECK) and 22003 (past bigint itself, a sum of deltas in addMany) as the port's RangeError; else `err`. */
function overflowOr(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '23514' || code === '22003') {
    return new RangeError('counters: the add would overflow the largest safe integer; nothing was applied', { cause: err });
  }
  return err;
}
