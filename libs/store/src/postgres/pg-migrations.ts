import type { PoolClient } from 'pg';
import type { PgHandle } from './pg-handle.ts';
import { quoteIdent } from './pg-sql.ts';
import { READ_VERSION_FUNCTION, READ_VERSIONS_TABLE } from './pg-read-versions.ts';

/**
 * The schema this code expects. Each migration runs once, in order, recorded as a row of
 * `ap_schema_version`; collection and log tables are created on first use instead (their names
 * come from the code that opens them), so they are not migrations.
 */
const MIGRATIONS: ReadonlyArray<(schema: string) => string[]> = [
  // 1: the counters table; `COLLATE "C"` so prefix ranges compare code points (prefix-range.ts),
  // and values kept to JavaScript's safe integers (the port's numbers), as the embedded adapter does.
  (schema) => [
    `CREATE TABLE IF NOT EXISTS ${schema}.ap_counters (key text COLLATE "C" PRIMARY KEY, ` +
      'value bigint NOT NULL CONSTRAINT ap_counters_safe_integer CHECK (value BETWEEN -9007199254740991 AND 9007199254740991), ' +
      'expires_at timestamptz)',
    `CREATE INDEX IF NOT EXISTS ap_counters__expires_at ON ${schema}.ap_counters (expires_at) WHERE expires_at IS NOT NULL`,
  ],
  // 2: the ids of idempotent counter adds (CounterAddOptions.once, pg-counters.ts), kept a while.
  (schema) => [
    `CREATE TABLE IF NOT EXISTS ${schema}.ap_counter_once (id text COLLATE "C" PRIMARY KEY, key text COLLATE "C", ` +
      "delta bigint NOT NULL, state text NOT NULL CHECK (state IN ('applied', 'withdrawn', 'prevented')), expires_at timestamptz NOT NULL)",
    `CREATE INDEX IF NOT EXISTS ap_counter_once__expires_at ON ${schema}.ap_counter_once (expires_at)`,
  ],
  // 3: the write version of each read-mostly table, bumped in the writing transaction by a statement
  // trigger on the table (created with the collection's table, pg-collection.ts), for the read
  // caches of every process (pg-read-versions.ts).
  (schema) => [
    `CREATE TABLE IF NOT EXISTS ${schema}.${READ_VERSIONS_TABLE} (tbl text COLLATE "C" PRIMARY KEY, version bigint NOT NULL)`,
    `CREATE OR REPLACE FUNCTION ${schema}.${READ_VERSION_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
      `INSERT INTO ${schema}.${READ_VERSIONS_TABLE} AS v (tbl, version) VALUES (TG_TABLE_NAME, 1) ` +
      'ON CONFLICT (tbl) DO UPDATE SET version = v.version + 1; RETURN NULL; END $$',
  ],
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings `schema` up to `SCHEMA_VERSION` under the schema lock (a transaction-scoped advisory
 * lock with a fixed key): stores opening together on an empty database migrate once, the others
 * wait and find it done. A database already at a newer version than this code knows is refused,
 * naming both versions, rather than written to with assumptions that may no longer hold.
 */
export async function migrate(handle: PgHandle, schemaName: string): Promise<void> {
  const schema = quoteIdent(schemaName);
  await handle.underSchemaLock(async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.ap_schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const current = await currentVersion(client, schema);
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `postgres store: the database schema ${schemaName} is at version ${current}, newer than this code's version ${SCHEMA_VERSION}; ` +
          'run a release of the platform that knows it (downgrading the schema is not supported)',
      );
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      for (const statement of MIGRATIONS[version - 1]!(schema)) await client.query(statement);
      await client.query(`INSERT INTO ${schema}.ap_schema_version (version) VALUES ($1)`, [version]);
    }
  });
}

async function currentVersion(client: PoolClient, schema: string): Promise<number> {
  const { rows } = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${schema}.ap_schema_version`);
  return rows[0]?.v ?? 0;
}
