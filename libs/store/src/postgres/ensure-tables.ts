import type { PgHandle } from './pg-handle.ts';
import { Lazy } from './lazy.ts';

/** A trigger `ensureTables` makes sure of: its name on its (qualified, quoted) table. */
export interface TriggerObject {
  table: string;
  name: string;
}

/**
 * The creation of a collection's or log's table and indexes (and triggers), run once per handle
 * before its first operation. `objects` are the qualified, quoted names the `ddl` creates, and
 * `triggers` the triggers it creates: when they all exist already (the usual case, every start
 * after the first) one catalog read settles it and no lock is taken; otherwise the
 * `CREATE ... IF NOT EXISTS` statements run under the schema lock, so two processes creating the
 * same table never collide in the catalog.
 */
export function ensureTables(
  handle: PgHandle,
  objects: readonly string[],
  ddl: readonly string[],
  triggers: readonly TriggerObject[] = [],
): Lazy {
  return new Lazy(async () => {
    const missing = await handle.query<{ n: number }>(
      'SELECT (SELECT count(*)::int FROM unnest($1::text[]) AS o(name) WHERE to_regclass(o.name) IS NULL) + ' +
        '(SELECT count(*)::int FROM unnest($2::text[], $3::text[]) AS t(tbl, name) WHERE NOT EXISTS ' +
        '(SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(t.tbl) AND tgname = t.name)) AS n',
      [objects, triggers.map((t) => t.table), triggers.map((t) => t.name)],
    );
    if (missing[0]?.n === 0) return;
    await handle.underSchemaLock(async (client) => {
      for (const statement of ddl) await client.query(statement);
    });
  });
}
