import type { PgHandle } from './pg-handle.ts';
import { Lazy } from './lazy.ts';

/**
 * The creation of a collection's or log's table and indexes, run once per handle before its
 * first operation. `objects` are the qualified, quoted names the `ddl` creates: when they all
 * exist already (the usual case, every start after the first) one catalog read settles it and
 * no lock is taken; otherwise the `CREATE ... IF NOT EXISTS` statements run under the schema
 * lock, so two processes creating the same table never collide in the catalog.
 */
export function ensureTables(handle: PgHandle, objects: readonly string[], ddl: readonly string[]): Lazy {
  return new Lazy(async () => {
    const missing = await handle.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM unnest($1::text[]) AS o(name) WHERE to_regclass(o.name) IS NULL',
      [objects],
    );
    if (missing[0]?.n === 0) return;
    await handle.underSchemaLock(async (client) => {
      for (const statement of ddl) await client.query(statement);
    });
  });
}
