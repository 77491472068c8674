import { access, rm } from 'node:fs/promises';
import Database from 'better-sqlite3';
import type { PoolClient } from 'pg';
import { prefixUpperBound } from '../prefix-range.ts';
import {
  SnapshotError,
  type SnapshotRestoreOptions,
  type SnapshotSummary,
  type StorePart,
  type StoreSnapshots,
} from '../store-snapshots.ts';
import { inPart, inspectSnapshot, isTransientTable, ownerOf, prefixFilter, type Owner } from '../embedded/sqlite-snapshots.ts';
import {
  COUNTERS_TABLE_SQL,
  FIELD_INDEX_NAME,
  collectionTableSql,
  fieldIndexSql,
  logTableSql,
} from '../embedded/sqlite-layout.ts';
import { SCHEMA_LOCK_KEY, type PgHandle } from './pg-handle.ts';
import { pgCollectionTableSql, pgFieldIndexSql, pgLogTableSql, quoteIdent } from './pg-sql.ts';

/** Rows per page read from PostgreSQL (keyset) or per batch written to it (`unnest`). */
export const SNAPSHOT_BATCH_ROWS = 500;

/** The PostgreSQL counters table; a snapshot file names it `counters`, as the embedded store does. */
const PG_COUNTERS = 'ap_counters';

/** The columns a snapshot table of each kind may hold (the embedded layout, sqlite-layout.ts). */
const COLUMNS: Record<Owner['kind'], { required: string[]; optional: string[] }> = {
  collection: { required: ['id', 'version', 'body'], optional: ['expires_at'] },
  log: { required: ['seq', 'body'], optional: [] },
  counters: { required: ['key', 'value'], optional: ['expires_at'] },
};

/** epoch ms (bigint) of a timestamptz column, null stays null. */
const msOf = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::bigint`;
/** The timestamptz of epoch ms given as a bigint expression. */
const timestampOf = (ms: string) => `(timestamptz 'epoch' + ${ms} * interval '1 millisecond')`;

interface LiveTable {
  /** The table's name in PostgreSQL (case as created). */
  name: string;
  owner: Owner;
}

/**
 * Snapshots of the PostgreSQL store in the embedded store's snapshot format: a SQLite file with
 * the embedded layout (`c_<collection>`, `l_<log>`, `counters`; sqlite-layout.ts), so archives
 * carry the same member, manifest, MAC and signature whichever adapter made them, and restore
 * into either (docs/backup.md "On PostgreSQL").
 *
 * - `snapshot`: one `REPEATABLE READ READ ONLY` transaction, so every table is read as of one
 *   instant while every node keeps writing; rows are read in keyset pages of
 *   `SNAPSHOT_BATCH_ROWS` (never a whole table in memory) and written to a fresh SQLite file in
 *   one SQLite transaction. Field indexes (`<table>__<u|i>__<field>`) are carried by name.
 * - `inspect`: the embedded one (`inspectSnapshot`): same format, same checks.
 * - `restore`: one PostgreSQL transaction: the schema lock (no table or index creation elsewhere
 *   meanwhile), then every existing table of the part locked `EXCLUSIVE` (readers go on seeing
 *   the old part, writers wait for the commit), rows of the part deleted and the snapshot's
 *   inserted in batches streamed from the file. A failure anywhere (the server gone, a row the
 *   server refuses) rolls all of it back: the old part stays whole.
 */
export class PgSnapshots implements StoreSnapshots {
  constructor(
    private readonly handle: PgHandle,
    private readonly schema: string,
  ) {}

  async snapshot(path: string, part: StorePart): Promise<SnapshotSummary> {
    const exists = await access(path).then(
      () => true,
      () => false,
    );
    if (exists) throw new SnapshotError(`the snapshot file ${path} exists already`);
    const file = new Database(path);
    try {
      file.exec('BEGIN');
      await this.handle.transaction(async (client) => {
        await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const tables = (await liveTables(client, this.schema)).filter((t) => inPart(part, t.owner));
        const indexes = await fieldIndexes(client, this.schema);
        for (const table of tables) {
          await copyOut(client, file, this.schema, table, part);
          for (const index of indexes.get(table.name) ?? []) file.exec(fieldIndexSql(table.name, index.kind, index.field));
        }
      });
      file.exec('COMMIT');
      file.close();
    } catch (error) {
      file.close();
      await rm(path, { force: true });
      throw error;
    }
    return this.inspect(path);
  }

  inspect(path: string): Promise<SnapshotSummary> {
    return inspectSnapshot(path);
  }

  async restore(path: string, part: StorePart, options: SnapshotRestoreOptions = {}): Promise<SnapshotSummary> {
    const summary = await this.inspect(path);
    const file = new Database(path, { fileMustExist: true });
    try {
      const source = sourceTables(file);
      for (const [key, table] of source) {
        const owner = ownerOf(key)!;
        const columns = columnsOf(file, table);
        const { required, optional } = COLUMNS[owner.kind];
        const unknown = columns.filter((c) => !required.includes(c) && !optional.includes(c));
        if (unknown.length > 0) {
          throw new SnapshotError(
            `the snapshot's table ${table} has columns this store lacks (${unknown.join(', ')}): it was made by a newer version`,
          );
        }
        const missing = required.filter((c) => !columns.includes(c));
        if (missing.length > 0) throw new SnapshotError(`the snapshot's table ${table} lacks the columns ${missing.join(', ')}`);
      }
      await this.handle.transaction(async (client) => {
        // Held to the commit: no other process creates a table or index in the schema meanwhile.
        await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK_KEY]);
        const live = new Map((await liveTables(client, this.schema)).map((t) => [keyOf(t), t]));
        const plan: Array<{ key: string; owner: Owner }> = [];
        for (const key of new Set([...source.keys(), ...live.keys()])) {
          const owner = ownerOf(key);
          if (owner !== null && inPart(part, owner)) plan.push({ key, owner });
        }
        plan.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        const locked = plan.map((p) => live.get(p.key)).filter((t): t is LiveTable => t !== undefined);
        if (locked.length > 0) {
          await client.query(`LOCK TABLE ${locked.map((t) => this.qualified(t.name)).join(', ')} IN EXCLUSIVE MODE`);
        }
        const kept = await keptCounters(client, this.qualified(PG_COUNTERS), options.keepHigherCounterPrefixes ?? []);
        for (const { key, owner } of plan) {
          const from = source.get(key);
          let to = live.get(key)?.name;
          if (to === undefined) {
            if (from === undefined || owner.kind === 'counters') continue;
            to = from.toLowerCase();
            const base = owner.kind === 'collection' ? pgCollectionTableSql(this.schema, to) : pgLogTableSql(this.schema, to);
            for (const statement of base.ddl) await client.query(statement);
            for (const index of snapshotIndexes(file, from)) {
              await client.query(pgFieldIndexSql(this.schema, to, index.kind, index.field).ddl);
            }
          }
          const filter = owner.kind === 'counters' && part.counterPrefixes !== 'all' ? part.counterPrefixes : null;
          const range = filter === null ? null : pgPrefixFilter(filter, 1);
          await client.query(`DELETE FROM ${this.qualified(to)}${range === null ? '' : ` WHERE ${range.sql}`}`, range?.params ?? []);
          if (from !== undefined) await copyIn(client, file, from, this.qualified(to), owner, filter);
        }
        if (kept.length > 0) {
          await client.query(
            `INSERT INTO ${this.qualified(PG_COUNTERS)} (key, value, expires_at) ` +
              'SELECT key, value, expires_at FROM unnest($1::text[], $2::bigint[], $3::timestamptz[]) AS k(key, value, expires_at) ' +
              'ON CONFLICT (key) DO UPDATE SET value = GREATEST(ap_counters.value, excluded.value)',
            [kept.map((k) => k.key), kept.map((k) => k.value), kept.map((k) => k.expires_at)],
          );
        }
      });
    } finally {
      file.close();
    }
    return summary;
  }

  private qualified(table: string): string {
    return `${quoteIdent(this.schema)}.${quoteIdent(table)}`;
  }
}

/** The key a table goes by in a snapshot file: its lower-cased name, `counters` for the counters. */
function keyOf(table: LiveTable): string {
  return table.owner.kind === 'counters' ? 'counters' : table.name.toLowerCase();
}

/** The store's tables in the schema: `c_*`, `l_*` and the counters (others, such as the schema version, are not data). */
async function liveTables(client: PoolClient, schema: string): Promise<LiveTable[]> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.relname",
    [schema],
  );
  const tables: LiveTable[] = [];
  const seen = new Map<string, string>();
  for (const { name } of rows) {
    const owner = name === PG_COUNTERS ? ({ kind: 'counters' } as const) : name === 'counters' ? null : ownerOf(name);
    if (owner === null) continue;
    const table = { name, owner };
    const key = keyOf(table);
    const other = seen.get(key);
    if (other !== undefined) {
      throw new SnapshotError(`the tables ${other} and ${name} differ only in case: a snapshot file cannot hold both`);
    }
    seen.set(key, name);
    tables.push(table);
  }
  return tables;
}

/** Field indexes of the schema by table, read from their names (`<table>__<u|i>__<field>`). */
async function fieldIndexes(client: PoolClient, schema: string): Promise<Map<string, Array<{ kind: 'u' | 'i'; field: string }>>> {
  const { rows } = await client.query<{ name: string; table: string }>(
    'SELECT indexname AS name, tablename AS table FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
    [schema],
  );
  const byTable = new Map<string, Array<{ kind: 'u' | 'i'; field: string }>>();
  for (const { name, table } of rows) {
    const match = FIELD_INDEX_NAME.exec(name);
    if (match === null || match[1] !== table) continue;
    const list = byTable.get(table) ?? [];
    list.push({ kind: match[2]!.toLowerCase() as 'u' | 'i', field: match[3]! });
    byTable.set(table, list);
  }
  return byTable;
}

/** `(key >= $n AND key < $n+1) OR ...`: the counters of `prefixes`, placeholders from `$first`. */
function pgPrefixFilter(prefixes: readonly string[], first: number): { sql: string; params: string[] } {
  const params: string[] = [];
  const terms = prefixes.map((prefix) => {
    const upper = prefixUpperBound(prefix);
    params.push(prefix);
    const low = `key >= $${first + params.length - 1}`;
    if (upper === null) return `(${low})`;
    params.push(upper);
    return `(${low} AND key < $${first + params.length - 1})`;
  });
  return { sql: terms.length === 0 ? 'false' : `(${terms.join(' OR ')})`, params };
}

/** Creates the table in the snapshot file and copies its rows (of the part) page by page. */
async function copyOut(client: PoolClient, file: Database.Database, schema: string, table: LiveTable, part: StorePart): Promise<void> {
  const qualified = `${quoteIdent(schema)}.${quoteIdent(table.name)}`;
  let select: string;
  let insert: string;
  let keyColumn: string;
  let extra: { sql: string; params: string[] } | null = null;
  switch (table.owner.kind) {
    case 'collection':
      for (const statement of collectionTableSql(table.name)) file.exec(statement);
      keyColumn = 'id';
      select = `SELECT id, version, doc::text AS body, ${msOf('expires_at')} AS expires_at FROM ${qualified}`;
      insert = `INSERT INTO "${table.name}" (id, version, body, expires_at) VALUES (?, ?, ?, ?)`;
      break;
    case 'log':
      for (const statement of logTableSql(table.name)) file.exec(statement);
      keyColumn = 'seq';
      select = `SELECT seq, entry::text AS body FROM ${qualified}`;
      insert = `INSERT INTO "${table.name}" (seq, body) VALUES (?, ?)`;
      break;
    case 'counters':
      for (const statement of COUNTERS_TABLE_SQL) file.exec(statement);
      keyColumn = 'key';
      select = `SELECT key, value, ${msOf('expires_at')} AS expires_at FROM ${qualified}`;
      insert = 'INSERT INTO counters (key, value, expires_at) VALUES (?, ?, ?)';
      if (part.counterPrefixes !== 'all') extra = pgPrefixFilter(part.counterPrefixes, 3);
      break;
  }
  const write = file.prepare(insert);
  /** The last key (id, seq as text, counter key) of the page before: the keyset bound. */
  let after: string | null = null;
  for (;;) {
    // $1 the last key read (null: from the start), $2 the page size, $3... the counter prefixes.
    const conditions = [`($1::text IS NULL OR ${keyColumn} > $1::${keyColumn === 'seq' ? 'bigint' : 'text'})`];
    if (extra !== null) conditions.push(extra.sql);
    const rows = await readPage(
      client,
      `${select} WHERE ${conditions.join(' AND ')} ORDER BY ${keyColumn} LIMIT $2`,
      [after, SNAPSHOT_BATCH_ROWS, ...(extra?.params ?? [])],
    );
    for (const row of rows) {
      switch (table.owner.kind) {
        case 'collection':
          write.run(row.id, row.version, row.body, intOrNull(row.expires_at));
          break;
        case 'log':
          write.run(Number(row.seq), row.body);
          break;
        case 'counters':
          write.run(row.key, Number(row.value), intOrNull(row.expires_at));
          break;
      }
    }
    if (rows.length < SNAPSHOT_BATCH_ROWS) return;
    const last = rows[rows.length - 1]![keyColumn];
    if (typeof last !== 'string' && typeof last !== 'number') throw new Error(`snapshot: no ${keyColumn} to page on in ${table.name}`);
    after = String(last);
  }
}

async function readPage(client: PoolClient, sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
  return (await client.query<Record<string, unknown>>(sql, params)).rows;
}

function intOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** Snapshot tables by key (lower-cased name; `counters`), refusing any the embedded layout does not make. */
function sourceTables(file: Database.Database): Map<string, string> {
  const rows = file
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    .all() as Array<{ name: string }>;
  // A snapshot opened as an embedded store gains its transient tables (ids of idempotent adds): not data.
  return new Map(rows.filter((r) => !isTransientTable(r.name)).map((r) => [r.name.toLowerCase(), r.name]));
}

function columnsOf(file: Database.Database, table: string): string[] {
  return (file.prepare('SELECT name FROM pragma_table_info(?)').all(table) as Array<{ name: string }>).map((r) =>
    r.name.toLowerCase(),
  );
}

function snapshotIndexes(file: Database.Database, table: string): Array<{ kind: 'u' | 'i'; field: string }> {
  const rows = file.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?").all(table) as Array<{
    name: string;
  }>;
  return rows.flatMap(({ name }) => {
    const match = FIELD_INDEX_NAME.exec(name);
    return match === null ? [] : [{ kind: match[2]!.toLowerCase() as 'u' | 'i', field: match[3]! }];
  });
}

/** Inserts the snapshot table's rows (of the counter prefixes, if given) in batches of `SNAPSHOT_BATCH_ROWS`. */
async function copyIn(
  client: PoolClient,
  file: Database.Database,
  from: string,
  to: string,
  owner: Owner,
  prefixes: readonly string[] | null,
): Promise<void> {
  const columns = columnsOf(file, from);
  const has = (column: string) => columns.includes(column);
  let read: string;
  let write: string;
  let params: unknown[] = [];
  switch (owner.kind) {
    case 'collection':
      read = `SELECT id, version, body, ${has('expires_at') ? 'expires_at' : 'NULL'} AS expires_at FROM "${from}"`;
      write =
        `INSERT INTO ${to} (id, version, doc, expires_at) SELECT id, version, doc::jsonb, ${timestampOf('ms')} ` +
        'FROM unnest($1::text[], $2::integer[], $3::text[], $4::bigint[]) AS r(id, version, doc, ms)';
      break;
    case 'log':
      read = `SELECT seq, body FROM "${from}"`;
      write = `INSERT INTO ${to} (seq, entry) SELECT seq, entry::jsonb FROM unnest($1::bigint[], $2::text[]) AS r(seq, entry)`;
      break;
    case 'counters': {
      const filter = prefixes === null ? null : prefixFilter(prefixes);
      read = `SELECT key, value, ${has('expires_at') ? 'expires_at' : 'NULL'} AS expires_at FROM "${from}"${filter === null ? '' : ` WHERE ${filter.sql}`}`;
      params = filter?.params ?? [];
      write =
        `INSERT INTO ${to} (key, value, expires_at) SELECT key, value, ${timestampOf('ms')} ` +
        'FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS r(key, value, ms)';
      break;
    }
  }
  const statement = file.prepare(read).raw(true);
  let batch: unknown[][] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const width = batch[0]!.length;
    const arrays = Array.from({ length: width }, (_, i) => batch.map((row) => row[i] ?? null));
    batch = [];
    await client.query(write, arrays);
  };
  for (const row of statement.iterate(...params) as IterableIterator<unknown[]>) {
    batch.push(row);
    if (batch.length >= SNAPSHOT_BATCH_ROWS) await flush();
  }
  await flush();
}

/** The live counters a restore must not lower, read (under the table lock) before the part is replaced. */
async function keptCounters(
  client: PoolClient,
  table: string,
  prefixes: readonly string[],
): Promise<Array<{ key: string; value: string; expires_at: Date | null }>> {
  if (prefixes.length === 0) return [];
  const filter = pgPrefixFilter(prefixes, 1);
  const { rows } = await client.query<{ key: string; value: string; expires_at: Date | null }>(
    `SELECT key, value, expires_at FROM ${table} WHERE ${filter.sql}`,
    filter.params,
  );
  return rows;
}
