import type { CounterDelta, Counters } from '../store.ts';
import type { SqliteHandle } from './sqlite-handle.ts';

const UPSERT_SQL =
  'INSERT INTO counters (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value';

/**
 * Counters live in one `counters` table (key -> integer). `add` reads and writes inside one
 * write (`SqliteHandle.write`, under the write lock), so the limit check and the write are
 * atomic across every process sharing the file. `addMany` does all of its keys in one write:
 * all or nothing.
 */
export class SqliteCounters implements Counters {
  constructor(private readonly db: SqliteHandle) {
    db.exec(
      'CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) STRICT',
    );
  }

  async add(
    key: string,
    delta: number,
    options: { limit?: number } = {},
  ): Promise<{ value: number; applied: boolean }> {
    const { limit } = options;
    if (!Number.isSafeInteger(delta))
      throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    if (limit !== undefined && Number.isNaN(limit)) throw new RangeError('counters: limit must be a number');
    return this.db.write(() => {
      const current = this.read(key);
      const next = current + delta;
      if (limit !== undefined && next > limit) return { value: current, applied: false };
      if (!Number.isSafeInteger(next)) throw new RangeError(`counters: '${key}' would overflow`);
      this.db.statement(UPSERT_SQL).run(key, next);
      return { value: next, applied: true };
    });
  }

  async addMany(deltas: ReadonlyArray<CounterDelta>): Promise<void> {
    for (const { delta } of deltas) {
      if (!Number.isSafeInteger(delta))
        throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    }
    const applied = deltas.filter(({ delta }) => delta !== 0);
    if (applied.length === 0) return;
    await this.db.write(() => {
      const upsert = this.db.statement(UPSERT_SQL);
      for (const { key, delta } of applied) {
        const next = this.read(key) + delta;
        // Thrown inside the transaction: it rolls back every delta of the batch.
        if (!Number.isSafeInteger(next)) throw new RangeError(`counters: '${key}' would overflow`);
        upsert.run(key, next);
      }
    });
  }

  async get(key: string): Promise<number> {
    return this.read(key);
  }

  async list(prefix: string): Promise<Record<string, number>> {
    // substr counts characters, not UTF-16 units, hence the spread; prefix is bound, so no LIKE
    // escaping is needed for keys containing '%' or '_'.
    const rows = this.db
      .statement('SELECT key, value FROM counters WHERE substr(key, 1, ?) = ? ORDER BY key')
      .all([...prefix].length, prefix) as { key: string; value: number }[];
    return Object.fromEntries(rows.map((row) => [row.key, row.value]));
  }

  private read(key: string): number {
    const row = this.db.statement('SELECT value FROM counters WHERE key = ?').get(key) as
      { value: number } | undefined;
    return row?.value ?? 0;
  }
}
