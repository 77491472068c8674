/**
 * The embedded adapter's tables, as SQL text: what `SqliteCollection`, `SqliteAppendLog` and
 * `SqliteCounters` create, and therefore the layout of a store snapshot file (docs/backup.md).
 * Kept free of imports so that other adapters writing or reading snapshot files (the PostgreSQL
 * one, `pg-snapshots.ts`) share the exact DDL without loading the embedded store.
 *
 * `table` arguments are bare names already vetted (`c_<name>`, `l_<name>`); `quote` them here.
 */
const q = (name: string): string => `"${name}"`;

/** `c_<name>`: id, version, the document as JSON text, expires_at in epoch ms. */
export function collectionTableSql(table: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${q(table)} (` +
      'id TEXT PRIMARY KEY NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL, expires_at INTEGER) STRICT',
    `CREATE INDEX IF NOT EXISTS ${q(`${table}__expires_at`)} ON ${q(table)}(expires_at) WHERE expires_at IS NOT NULL`,
  ];
}

/** `l_<name>`: seq and the entry (without its seq) as JSON text. */
export function logTableSql(table: string): string[] {
  return [`CREATE TABLE IF NOT EXISTS ${q(table)} (seq INTEGER PRIMARY KEY NOT NULL, body TEXT NOT NULL) STRICT`];
}

/** `counters`: key, integer value, expires_at in epoch ms. */
export const COUNTERS_TABLE_SQL: readonly string[] = [
  'CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL, expires_at INTEGER) STRICT',
  'CREATE INDEX IF NOT EXISTS counters__expires_at ON counters(expires_at) WHERE expires_at IS NOT NULL',
];

/**
 * `counter_once`: the ids of idempotent counter adds (CounterAddOptions.once): the counter and
 * delta the add applied, its state (`applied`, `withdrawn`, `prevented`) and until when it is
 * remembered (epoch ms). Not part of a snapshot (sqlite-snapshots.ts drops it): ids live a day.
 */
export const COUNTER_ONCE_TABLE_SQL: readonly string[] = [
  'CREATE TABLE IF NOT EXISTS counter_once (id TEXT PRIMARY KEY NOT NULL, key TEXT, delta INTEGER NOT NULL, state TEXT NOT NULL, expires_at INTEGER NOT NULL) STRICT',
  'CREATE INDEX IF NOT EXISTS counter_once__expires_at ON counter_once(expires_at)',
];

/** The SQL expression of a top-level field of the JSON `body` (the same text in indexes and queries). */
export function sqliteJsonField(field: string): string {
  return `json_extract(body, '$.${field}')`;
}

/**
 * The expression index on a field of a collection (`kind` `u` unique or `i`) or a log (`i`), named
 * `<table>__<kind>__<field>`: the name tells the index, so a snapshot carries its indexes by name.
 */
export function fieldIndexSql(table: string, kind: 'u' | 'i', field: string): string {
  return (
    `CREATE ${kind === 'u' ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${q(`${table}__${kind}__${field}`)} ` +
    `ON ${q(table)}(${sqliteJsonField(field)})`
  );
}

/** `<table>__<u|i>__<field>`, the name `fieldIndexSql` gives (in either adapter), read back. */
export const FIELD_INDEX_NAME = /^((?:c|l)_[a-z_][a-z0-9_]*)__(u|i)__([a-z_][a-z0-9_]*)$/i;
