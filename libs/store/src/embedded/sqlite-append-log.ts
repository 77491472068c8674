import type { AppendLog, DropOptions, LogEntry, LogListQuery, LogOptions } from '../store.ts';
import { assertSqlName, jsonField, quoteIdent } from './sql-names.ts';
import { fieldIndexSql, logTableSql } from './sqlite-layout.ts';
import { pageSql, whereConditions, whereSql } from './sql-where.ts';
import type { SqliteHandle } from './sqlite-handle.ts';

interface Row {
  seq: number;
  body: string;
}

/**
 * An append log is one table `l_<name>` keyed by `seq` with the entry as JSON. Declared
 * `indexes` become expression indexes on the JSON (the same mechanism as collections), so a
 * log that gains an index later needs no column migration or backfill.
 *
 * Linearizability across processes comes from `append` reading the tip and inserting tip + 1
 * inside one write (`SqliteHandle.write`, a `BEGIN IMMEDIATE` transaction): the database-wide
 * write lock is held from the read on, so no other writer (in this or another process) can slip
 * in between. `seq` is the
 * primary key, so even a bug there would surface as a constraint error, never as a fork.
 */
export class SqliteAppendLog<T extends object> implements AppendLog<T> {
  private readonly table: string;

  constructor(
    private readonly db: SqliteHandle,
    name: string,
    options: LogOptions<T>,
  ) {
    const table = `l_${assertSqlName('log', name)}`;
    this.table = quoteIdent(table);
    for (const statement of logTableSql(table)) db.exec(statement);
    for (const field of options.indexes ?? []) db.exec(fieldIndexSql(table, 'i', assertSqlName('field', field)));
  }

  async append(build: (tip: LogEntry<T> | null) => T): Promise<LogEntry<T>> {
    // `build` runs exactly once here because the lock is held; the port allows more calls, so
    // adapters with optimistic appends (MongoDB) can retry it.
    return this.db.write(() => {
      const tip = this.readTip();
      const built = build(tip);
      if (typeof built !== 'object' || built === null || Array.isArray(built)) {
        throw new TypeError('append: build must return a JSON object');
      }
      // `seq` is assigned here; a copy left over from spreading the tip must not be stored.
      const { seq: _ignored, ...fields } = built as T & { seq?: unknown };
      const seq = (tip?.seq ?? 0) + 1;
      const body = JSON.stringify(fields);
      this.db.statement(`INSERT INTO ${this.table} (seq, body) VALUES (?, ?)`).run(seq, body);
      return toEntry<T>({ seq, body });
    });
  }

  async tip(): Promise<LogEntry<T> | null> {
    return this.readTip();
  }

  async count(): Promise<number> {
    return (this.db.statement(`SELECT count(*) AS n FROM ${this.table}`).get() as { n: number }).n;
  }

  async list(query: LogListQuery<T> = {}): Promise<LogEntry<T>[]> {
    const { clauses, params } = whereConditions(query.where);
    if (query.since !== undefined) {
      clauses.push(`${jsonField(query.since.field)} >= ?`);
      params.push(query.since.value);
    }
    const order = query.order === 'asc' ? 'ASC' : 'DESC';
    const sql =
      `SELECT seq, body FROM ${this.table}${whereSql(clauses)} ORDER BY seq ${order}` +
      pageSql(query.limit, undefined, params);
    return (this.db.statement(sql).all(...params) as Row[]).map((row) => toEntry<T>(row));
  }

  async scan(fromSeq: number, limit: number): Promise<LogEntry<T>[]> {
    const params: (number | string | null)[] = [fromSeq];
    const sql =
      `SELECT seq, body FROM ${this.table} WHERE seq >= ? ORDER BY seq ASC` +
      pageSql(limit, undefined, params);
    return (this.db.statement(sql).all(...params) as Row[]).map((row) => toEntry<T>(row));
  }

  async dropBefore(beforeSeq: number, options: DropOptions = {}): Promise<number> {
    const fromSeq = options.fromSeq ?? 1;
    const keep = options.keep ?? [];
    assertSeq('beforeSeq', beforeSeq);
    assertSeq('fromSeq', fromSeq);
    for (const seq of keep) assertSeq('keep', seq);
    // One write: the tip is read under the write lock, so the newest entry (and any entry an
    // append adds meanwhile, which waits for the lock) is out of reach.
    return this.db.write(() => {
      const sql =
        `DELETE FROM ${this.table} WHERE seq >= ? AND seq < ? AND seq < (SELECT max(seq) FROM ${this.table})` +
        (keep.length === 0 ? '' : ' AND seq NOT IN (SELECT value FROM json_each(?))');
      const params: (number | string)[] = [fromSeq, beforeSeq];
      if (keep.length > 0) params.push(JSON.stringify(keep));
      return Number(this.db.statement(sql).run(...params).changes);
    });
  }

  private readTip(): LogEntry<T> | null {
    const row = this.db.statement(`SELECT seq, body FROM ${this.table} ORDER BY seq DESC LIMIT 1`).get() as
      Row | undefined;
    return row === undefined ? null : toEntry<T>(row);
  }
}

function assertSeq(name: string, value: number): void {
  if (!Number.isSafeInteger(value)) throw new TypeError(`dropBefore: ${name} must be an integer seq, not ${String(value)}`);
}

function toEntry<T>(row: Row): LogEntry<T> {
  return { ...(JSON.parse(row.body) as T), seq: row.seq };
}
