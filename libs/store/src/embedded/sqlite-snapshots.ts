import { prefixUpperBound } from '../prefix-range.ts';
import {
  SnapshotError,
  type SnapshotRestoreOptions,
  type SnapshotSummary,
  type StorePart,
  type StoreSnapshots,
} from '../store-snapshots.ts';
import type { SqliteHandle, SqlValue } from './sqlite-handle.ts';
import { runSqliteJob, type SqliteJobStep } from './sqlite-worker-job.ts';

/** Tables this adapter makes: `c_<collection>`, `l_<log>`, `counters`; the name check of sql-names.ts. */
const TABLE = /^(?:(c|l)_([a-z_][a-z0-9_]*)|counters)$/i;
/** The attached snapshot's schema name during a restore. */
const SOURCE = 'restore_src';
/** A copy of a large database takes a while; its read lock is never refused in WAL mode anyway. */
const JOB_TIMEOUT_MS = 60_000;

/**
 * Tables this adapter makes that no snapshot carries: `counter_once` (the ids of idempotent counter
 * adds, kept a day; sqlite-layout.ts). A snapshot drops them; one that holds them (a snapshot file
 * opened as a store) is still read, and a restore leaves the live store's own.
 */
const TRANSIENT = new Set(['counter_once']);

/** Whether `table` is one of the tables no snapshot carries (TRANSIENT): a reader of a snapshot skips it. */
export function isTransientTable(table: string): boolean {
  return TRANSIENT.has(table.toLowerCase());
}

export type Owner = { kind: 'collection' | 'log'; name: string } | { kind: 'counters' };

export function ownerOf(table: string): Owner | null {
  const match = TABLE.exec(table);
  if (match === null) return null;
  if (match[1] === undefined) return { kind: 'counters' };
  return { kind: match[1].toLowerCase() === 'c' ? 'collection' : 'log', name: match[2]!.toLowerCase() };
}

function listed(names: 'all' | readonly string[], name: string): boolean {
  return names === 'all' || names.some((n) => n.toLowerCase() === name);
}

/** Whether the part holds the table's rows (for counters: some of them, see counterFilter). */
export function inPart(part: StorePart, owner: Owner): boolean {
  if (owner.kind === 'counters') return part.counterPrefixes === 'all' || part.counterPrefixes.length > 0;
  return listed(owner.kind === 'collection' ? part.collections : part.logs, owner.name);
}

/** SQL condition on `key` selecting the counters of `prefixes`, with its parameters. */
export function prefixFilter(prefixes: readonly string[]): { sql: string; params: SqlValue[] } {
  const params: SqlValue[] = [];
  const terms = prefixes.map((prefix) => {
    const upper = prefixUpperBound(prefix);
    params.push(prefix);
    if (upper === null) return '(key >= ?)';
    params.push(upper);
    return '(key >= ? AND key < ?)';
  });
  return { sql: terms.length === 0 ? '0' : terms.join(' OR '), params };
}

function quote(name: string): string {
  return `"${name}"`;
}

/** The embedded adapter's snapshots: `VACUUM INTO` copies, restored by one transaction on the live file. */
export class SqliteSnapshots implements StoreSnapshots {
  constructor(
    private readonly db: SqliteHandle,
    /** The live database file, which snapshot jobs open with connections of their own. */
    private readonly file: string,
  ) {}

  async snapshot(path: string, part: StorePart): Promise<SnapshotSummary> {
    // One read transaction copies everything as of one instant; WAL lets writers go on meanwhile.
    await runSqliteJob(this.file, [{ sql: 'VACUUM INTO ?', params: [path] }], JOB_TIMEOUT_MS);
    const tables = await tableNames(path);
    const prune: SqliteJobStep[] = [];
    for (const table of tables) {
      const owner = ownerOf(table);
      if (owner === null || !inPart(part, owner)) prune.push({ sql: `DROP TABLE ${quote(table)}` });
      else if (owner.kind === 'counters' && part.counterPrefixes !== 'all') {
        const filter = prefixFilter(part.counterPrefixes);
        prune.push({ sql: `DELETE FROM counters WHERE NOT (${filter.sql})`, params: filter.params });
      }
    }
    // Dropped rows stay in free pages until a VACUUM: a partial snapshot must not carry them.
    if (prune.length > 0) await runSqliteJob(path, [...prune, { sql: 'VACUUM' }], JOB_TIMEOUT_MS);
    return this.inspect(path);
  }

  inspect(path: string): Promise<SnapshotSummary> {
    return inspectSnapshot(path);
  }

  async restore(
    path: string,
    part: StorePart,
    options: SnapshotRestoreOptions = {},
  ): Promise<SnapshotSummary> {
    const summary = await this.inspect(path);
    // ATTACH cannot run inside a transaction; none is open between two turns of the event loop
    // (group-commit.ts opens and commits each batch within one synchronous call).
    this.db.statement(`ATTACH DATABASE ? AS ${SOURCE}`).run(path);
    try {
      await this.db.write(() => {
        this.db.reads.forgetAll();
        return copyPart(this.db, part, options);
      });
    } finally {
      this.db.statement(`DETACH DATABASE ${SOURCE}`).run();
    }
    return summary;
  }
}

/** `StoreSnapshots.inspect`, for a snapshot file read without a store (`agent-platform backup verify`). */
export async function inspectSnapshot(path: string): Promise<SnapshotSummary> {
  let rows: Array<unknown[] | null>;
  try {
    rows = await runSqliteJob(path, [
      { sql: 'PRAGMA quick_check', read: true },
      {
        sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        read: true,
      },
    ]);
  } catch (error) {
    throw new SnapshotError(`the store snapshot cannot be read: ${(error as Error).message}`);
  }
  const check = (rows[0] ?? []) as Array<{ quick_check: string }>;
  if (check.length !== 1 || check[0]?.quick_check !== 'ok') {
    throw new SnapshotError(
      `the store snapshot is damaged: ${check
        .map((r) => r.quick_check)
        .slice(0, 3)
        .join('; ')}`,
    );
  }
  const tables = ((rows[1] ?? []) as Array<{ name: string }>).map((r) => r.name);
  const kept = tables.filter((t) => !isTransientTable(t));
  const foreign = kept.filter((t) => ownerOf(t) === null);
  if (foreign.length > 0)
    throw new SnapshotError(
      `the store snapshot holds tables this platform does not make: ${foreign.slice(0, 5).join(', ')}`,
    );
  const counts = await runSqliteJob(
    path,
    kept.map((t) => ({ sql: `SELECT count(*) AS n FROM ${quote(t)}`, read: true })),
  );
  const summary: SnapshotSummary = { collections: {}, logs: {}, counters: 0 };
  kept.forEach((table, i) => {
    const n = ((counts[i] ?? []) as Array<{ n: number }>)[0]?.n ?? 0;
    const owner = ownerOf(table)!;
    if (owner.kind === 'counters') summary.counters = n;
    else (owner.kind === 'collection' ? summary.collections : summary.logs)[owner.name] = n;
  });
  return summary;
}

async function tableNames(path: string): Promise<string[]> {
  const [rows] = await runSqliteJob(path, [
    {
      sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
      read: true,
    },
  ]);
  return ((rows ?? []) as Array<{ name: string }>).map((r) => r.name);
}

interface TableInfo {
  name: string;
  sql: string;
}

function tablesIn(db: SqliteHandle, schema: string): Map<string, TableInfo> {
  const rows = db
    .statement(
      `SELECT name, sql FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
    )
    .all() as TableInfo[];
  return new Map(rows.map((row) => [row.name.toLowerCase(), row]));
}

function columnsOf(db: SqliteHandle, schema: string, table: string): string[] {
  return (
    db.statement('SELECT name FROM pragma_table_info(?, ?)').all(table, schema) as Array<{ name: string }>
  ).map((r) => r.name);
}

/**
 * Runs inside one write transaction: replaces every table of the part with the snapshot's rows
 * (creating the tables, with their indexes, that exist only in the snapshot; emptying those that
 * exist only here). Throws before writing anything when a snapshot table has a column this
 * store's table lacks (a snapshot of a newer layout); a throw rolls the whole write back.
 */
function copyPart(db: SqliteHandle, part: StorePart, options: SnapshotRestoreOptions): void {
  const source = tablesIn(db, SOURCE);
  const live = tablesIn(db, 'main');
  const plan: Array<{ key: string; owner: Owner }> = [];
  for (const key of new Set([...source.keys(), ...live.keys()])) {
    const owner = ownerOf(key);
    if (owner !== null && inPart(part, owner)) plan.push({ key, owner });
  }
  for (const { key } of plan) {
    const from = source.get(key);
    const to = live.get(key);
    if (from === undefined || to === undefined) continue;
    const missing = columnsOf(db, SOURCE, from.name).filter(
      (c) => !columnsOf(db, 'main', to.name).includes(c),
    );
    if (missing.length > 0)
      throw new Error(
        `the snapshot's table ${from.name} has columns this store lacks (${missing.join(', ')}): it was made by a newer version`,
      );
  }
  const kept = keptCounters(db, live.has('counters'), options.keepHigherCounterPrefixes ?? []);
  for (const { key, owner } of plan) {
    const from = source.get(key);
    let to = live.get(key);
    if (to === undefined && from !== undefined) {
      db.exec(from.sql);
      const indexes = db
        .statement(
          `SELECT sql FROM ${SOURCE}.sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
        )
        .all(from.name) as Array<{ sql: string }>;
      for (const index of indexes) db.exec(index.sql);
      to = from;
    }
    if (to === undefined) continue;
    const filter =
      owner.kind === 'counters' && part.counterPrefixes !== 'all' ? prefixFilter(part.counterPrefixes) : null;
    db.statement(`DELETE FROM main.${quote(to.name)}${filter === null ? '' : ` WHERE ${filter.sql}`}`).run(
      ...(filter?.params ?? []),
    );
    if (from === undefined) continue;
    const columns = columnsOf(db, SOURCE, from.name).map(quote).join(', ');
    db.statement(
      `INSERT INTO main.${quote(to.name)} (${columns}) SELECT ${columns} FROM ${SOURCE}.${quote(from.name)}${filter === null ? '' : ` WHERE ${filter.sql}`}`,
    ).run(...(filter?.params ?? []));
  }
  for (const row of kept) {
    db.statement(
      'INSERT INTO main.counters (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)',
    ).run(row.key, row.value, row.expires_at);
  }
}

/** The live counters a restore must not lower (read before the part is replaced). */
function keptCounters(
  db: SqliteHandle,
  hasCounters: boolean,
  prefixes: readonly string[],
): Array<{ key: string; value: number; expires_at: number | null }> {
  if (!hasCounters || prefixes.length === 0) return [];
  const filter = prefixFilter(prefixes);
  return db
    .statement(`SELECT key, value, expires_at FROM main.counters WHERE ${filter.sql}`)
    .all(...filter.params) as Array<{
    key: string;
    value: number;
    expires_at: number | null;
  }>;
}
