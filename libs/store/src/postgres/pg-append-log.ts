import { setTimeout as sleep } from 'node:timers/promises';
import type { AppendLog, DropOptions, LogEntry, LogListQuery, LogOptions } from '../store.ts';
import { appendOptimistically, buildEntry, jitterMs } from '../mongodb/optimistic-append.ts';
import type { SerialQueue } from '../mongodb/optimistic-append.ts';
import type { KnownTip } from './pg-known-tip.ts';
import type { PgHandle } from './pg-handle.ts';
import { assertPgName, pageSql, pgFieldIndexSql, pgLogTableSql, quoteIdent, whereConditions, whereSql } from './pg-sql.ts';
import type { Lazy } from './lazy.ts';
import { ensureTables } from './ensure-tables.ts';

/** What the handles of one log share in a process: its queue of appends and the tip it last wrote. */
export interface AppendLane {
  queue: SerialQueue;
  tip: KnownTip;
}

interface Row {
  seq: string;
  entry: Record<string, unknown>;
}

/**
 * An append log is one table `l_<name>` (seq bigint primary key, entry jsonb).
 *
 * `append` is optimistic, as in the MongoDB adapter (`appendOptimistically`): read the tip,
 * `build(tip)`, then `INSERT ... (seq = tip + 1) ON CONFLICT (seq) DO NOTHING`; an insert that
 * finds its seq taken changed nothing and the loop re-reads the tip. The primary key lets exactly
 * one of the writers that read the same tip win, and the newest entry is never deleted
 * (`dropBefore` stops below it), so a successful insert of tip + 1 proves the tip was still the
 * tip: no gap, no fork, and the builder saw the true tip, across every process and host sharing
 * the database. Appends from this process to one log also go through one `SerialQueue`, so only
 * other processes ever collide.
 *
 * Why not a per-log tip row locked `FOR UPDATE` in a transaction: `build` is the caller's code,
 * and that would run it while a row lock and a pooled connection are held (a slow builder would
 * stall every other writer and pin a connection, and a connection lost mid-transaction leaves the
 * lock until the server notices). Optimistic appends are two autocommit statements, hold nothing
 * between them, and a lost connection can only leave a whole entry or none.
 *
 * One statement instead of two when this process wrote the tip itself (`KnownTip`): the entry is
 * built on the tip as this process wrote it and inserted only if that is still the tip, checked in
 * the insert itself (the row below holds exactly that entry, and no row at or above the new seq
 * exists: a restore that rolled the log back, or another process's append, makes it insert
 * nothing); then the loop above runs as before. Where other processes append to the same log by
 * turns, guesses stop once they miss more often than they hold (each miss is one statement lost).
 */
export class PgAppendLog<T extends object> implements AppendLog<T> {
  private readonly table: string;
  private readonly ready: Lazy;

  constructor(
    private readonly handle: PgHandle,
    schema: string,
    private readonly name: string,
    options: LogOptions<T>,
    private readonly lane: AppendLane,
  ) {
    const bare = `l_${assertPgName('log', name)}`;
    this.table = `${quoteIdent(schema)}.${quoteIdent(bare)}`;
    const base = pgLogTableSql(schema, bare);
    const indexes = (options.indexes ?? []).map((field) => pgFieldIndexSql(schema, bare, 'i', field));
    this.ready = ensureTables(
      handle,
      [...base.objects, ...indexes.map(({ object }) => object)],
      [...base.ddl, ...indexes.map(({ ddl }) => ddl)],
    );
  }

  async append(build: (tip: LogEntry<T> | null) => T): Promise<LogEntry<T>> {
    await this.ready.get();
    return this.lane.queue.run(async () => {
      const written = (await this.onKnownTip(build)) ?? (await this.appendReadingTip(build));
      this.lane.tip.wrote({ ...written });
      return written;
    });
  }

  /** The entry built on the tip this process last wrote, inserted only if that is still the tip; null when not tried or not held. */
  private async onKnownTip(build: (tip: LogEntry<T> | null) => T): Promise<LogEntry<T> | null> {
    const known = this.lane.tip.guess() as LogEntry<T> | undefined;
    if (known === undefined) return null;
    const { seq: _seq, ...knownEntry } = known;
    const entry = buildEntry(build, known);
    const seq = known.seq + 1;
    const rows = await this.handle.query(
      `INSERT INTO ${this.table} (seq, entry) SELECT $1::bigint, $2::jsonb ` +
        `WHERE EXISTS (SELECT 1 FROM ${this.table} WHERE seq = $1::bigint - 1 AND entry = $3::jsonb) ` +
        `AND NOT EXISTS (SELECT 1 FROM ${this.table} WHERE seq >= $1) ON CONFLICT (seq) DO NOTHING RETURNING seq`,
      [seq, entry.body, JSON.stringify(knownEntry)],
    );
    this.lane.tip.guessed(rows.length === 1);
    return rows.length === 1 ? { ...entry.json, seq } : null;
  }

  private appendReadingTip(build: (tip: LogEntry<T> | null) => T): Promise<LogEntry<T>> {
    return appendOptimistically<T>(
      {
        readTip: () => this.tip(),
        tryInsert: async (seq, { body }) => {
          const rows = await this.handle.query(
            `INSERT INTO ${this.table} (seq, entry) VALUES ($1, $2::jsonb) ON CONFLICT (seq) DO NOTHING RETURNING seq`,
            [seq, body],
          );
          return rows.length === 1;
        },
        backoff: (attempt) => sleep(jitterMs(attempt)),
      },
      build,
      this.name,
    );
  }

  async tip(): Promise<LogEntry<T> | null> {
    const rows = await this.query<Row>(`SELECT seq, entry FROM ${this.table} ORDER BY seq DESC LIMIT 1`, []);
    return rows[0] === undefined ? null : toEntry<T>(rows[0]);
  }

  async count(): Promise<number> {
    const rows = await this.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.table}`, []);
    return Number(rows[0]!.n);
  }

  async list(query: LogListQuery<T> = {}): Promise<LogEntry<T>[]> {
    const params: unknown[] = [];
    const clauses = whereConditions('entry', query.where, params);
    if (query.since !== undefined) {
      params.push(query.since.value);
      // Lexical, by code point (ISO timestamps), whatever the database's collation.
      clauses.push(`(entry ->> '${assertPgName('field', query.since.field)}') COLLATE "C" >= $${params.length}`);
    }
    const order = query.order === 'asc' ? 'ASC' : 'DESC';
    const page = pageSql(query.limit, undefined, params);
    const rows = await this.query<Row>(`SELECT seq, entry FROM ${this.table}${whereSql(clauses)} ORDER BY seq ${order}${page}`, params);
    return rows.map((row) => toEntry<T>(row));
  }

  async scan(fromSeq: number, limit: number): Promise<LogEntry<T>[]> {
    const params: unknown[] = [fromSeq];
    const page = pageSql(limit, undefined, params);
    const rows = await this.query<Row>(`SELECT seq, entry FROM ${this.table} WHERE seq >= $1 ORDER BY seq ASC${page}`, params);
    return rows.map((row) => toEntry<T>(row));
  }

  /**
   * One DELETE: the range below `beforeSeq` and below the tip (read in the same statement, so the
   * newest entry always stays; an append racing with it lands above that bound).
   */
  async dropBefore(beforeSeq: number, options: DropOptions = {}): Promise<number> {
    const fromSeq = options.fromSeq ?? 1;
    const keep = options.keep ?? [];
    for (const [name, value] of [['beforeSeq', beforeSeq], ['fromSeq', fromSeq], ...keep.map((k) => ['keep', k] as const)] as const) {
      if (!Number.isSafeInteger(value)) throw new TypeError(`dropBefore: ${name} must be an integer seq, not ${String(value)}`);
    }
    const rows = await this.query<{ n: string }>(
      `WITH d AS (DELETE FROM ${this.table} WHERE seq >= $1 AND seq < LEAST($2::bigint, (SELECT max(seq) FROM ${this.table})) ` +
        'AND NOT (seq = ANY ($3::bigint[])) RETURNING 1) SELECT count(*) AS n FROM d',
      [fromSeq, beforeSeq, keep],
    );
    return Number(rows[0]!.n);
  }

  private async query<R extends object>(text: string, params: unknown[]): Promise<R[]> {
    await this.ready.get();
    return this.handle.query<R & Record<string, unknown>>(text, params);
  }
}

function toEntry<T>(row: Row): LogEntry<T> {
  return { ...(row.entry as T), seq: Number(row.seq) };
}
