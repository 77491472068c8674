import { StoreConflictError, StoreDuplicateError } from '../store.ts';
import type { Collection, CollectionOptions, Doc, FindQuery, Versioned, Where } from '../store.ts';
import { assertSqlName, jsonField, quoteIdent } from './sql-names.ts';
import { collectionTableSql, fieldIndexSql } from './sqlite-layout.ts';
import { pageSql, whereConditions, whereSql } from './sql-where.ts';
import type { SqliteHandle, SqlValue } from './sqlite-handle.ts';
import { isUniqueViolation } from './sqlite-handle.ts';
import { remember, type TableReadCache } from '../read-cache-table.ts';

interface Row {
  version: number;
  body: string;
}

/**
 * A collection is one table `c_<name>` (id, version, body JSON, expires_at). A table per
 * collection rather than one shared table keeps unique indexes naturally scoped to their
 * collection (no partial indexes on a collection column), keeps each expression index small,
 * and lets a TTL purge touch only its own rows. SQLite table names are case-insensitive, so
 * collection names differing only in case share a table.
 *
 * `expires_at` holds the ttl field as epoch milliseconds, parsed once on write, so visibility is
 * a numeric comparison rather than a lexical one on whatever ISO spelling the caller used.
 */
export class SqliteCollection<T extends Doc> implements Collection<T> {
  private readonly table: string;
  /** The table's bare name: what the read caches are kept and forgotten by. */
  private readonly bareTable: string;
  private readonly ttlField: string | undefined;
  /** `readMostly` without a ttl (a ttl hides documents as time passes, with no write to see). */
  private readonly cached: boolean;

  constructor(
    private readonly db: SqliteHandle,
    private readonly name: string,
    options: CollectionOptions<T>,
    private readonly clock: () => Date,
  ) {
    const table = `c_${assertSqlName('collection', name)}`;
    // SQLite table names are case-insensitive: so are the caches' keys.
    this.bareTable = table.toLowerCase();
    this.table = quoteIdent(table);
    this.ttlField = options.ttlField === undefined ? undefined : assertSqlName('field', options.ttlField);
    this.cached = options.readMostly === true && this.ttlField === undefined;
    for (const statement of collectionTableSql(table)) db.exec(statement);
    for (const { field, unique } of options.indexes ?? []) {
      db.exec(fieldIndexSql(table, unique ? 'u' : 'i', assertSqlName('field', field)));
    }
  }

  async get(id: string): Promise<Versioned<T> | null> {
    const cache = this.readCache();
    const hit = cache?.docs.get(id);
    if (hit !== undefined) return hit as Versioned<T>;
    const row = this.db
      .statement(`SELECT version, body FROM ${this.table} WHERE id = ? AND ${this.visibleSql()}`)
      .get(id, this.nowMs()) as Row | undefined;
    if (row === undefined) return null;
    const found = toVersioned<T>(row);
    return cache === undefined ? found : (remember(cache.docs, id, found, 'docs') as Versioned<T>);
  }

  /** The table's read cache when this collection is cached and no transaction is open. */
  private readCache(): TableReadCache | undefined {
    return this.cached && !this.db.inTransaction ? this.db.reads.tableFor(this.bareTable) : undefined;
  }

  async insert(doc: T): Promise<Versioned<T>> {
    const { id, body, expiresAt } = this.serialize(doc);
    await this.db.write(() => {
      this.beforeWrite();
      this.writeOrDuplicate(id, () =>
        this.db
          .statement(`INSERT INTO ${this.table} (id, version, body, expires_at) VALUES (?, 1, ?, ?)`)
          .run(id, body, expiresAt),
      );
    });
    return { doc: JSON.parse(body) as T, version: 1 };
  }

  async replace(doc: T, expectedVersion: number): Promise<Versioned<T>> {
    const { id, body, expiresAt } = this.serialize(doc);
    const { changes } = await this.db.write(() => {
      this.beforeWrite();
      return this.writeOrDuplicate(id, () =>
        this.db
          .statement(
            `UPDATE ${this.table} SET version = version + 1, body = ?, expires_at = ? WHERE id = ? AND version = ?`,
          )
          .run(body, expiresAt, id, expectedVersion),
      );
    });
    if (changes === 0) throw new StoreConflictError(this.name, id);
    return { doc: JSON.parse(body) as T, version: expectedVersion + 1 };
  }

  async upsert(doc: T): Promise<Versioned<T>> {
    const { id, body, expiresAt } = this.serialize(doc);
    const row = (await this.db.write(() => {
      this.beforeWrite();
      return this.writeOrDuplicate(id, () =>
        this.db
          .statement(
            `INSERT INTO ${this.table} (id, version, body, expires_at) VALUES (?, 1, ?, ?) ` +
              'ON CONFLICT(id) DO UPDATE SET version = version + 1, body = excluded.body, ' +
              'expires_at = excluded.expires_at RETURNING version',
          )
          .get(id, body, expiresAt),
      );
    })) as { version: number };
    return { doc: JSON.parse(body) as T, version: row.version };
  }

  /** One write: the read, `change` and the write all happen under the write lock, so it never conflicts. */
  async update(id: string, change: (current: Versioned<T> | null) => T | null): Promise<Versioned<T> | null> {
    const written = await this.db.write((): { current: Versioned<T> | null; body: string | null } => {
      this.beforeWrite();
      const row = this.db.statement(`SELECT version, body FROM ${this.table} WHERE id = ?`).get(id) as
        Row | undefined;
      const current = row === undefined ? null : toVersioned<T>(row);
      const next = change(current);
      if (next === null) return { current, body: null };
      if (next?.id !== id) throw new TypeError(`${this.name}: update of '${id}' must keep the document's id`);
      const { body, expiresAt } = this.serialize(next);
      if (current === null) {
        this.writeOrDuplicate(id, () =>
          this.db
            .statement(`INSERT INTO ${this.table} (id, version, body, expires_at) VALUES (?, 1, ?, ?)`)
            .run(id, body, expiresAt),
        );
      } else {
        this.writeOrDuplicate(id, () =>
          this.db
            .statement(
              `UPDATE ${this.table} SET version = version + 1, body = ?, expires_at = ? WHERE id = ?`,
            )
            .run(body, expiresAt, id),
        );
      }
      return { current, body };
    });
    if (written.body === null) return written.current;
    return { doc: JSON.parse(written.body) as T, version: (written.current?.version ?? 0) + 1 };
  }

  async delete(id: string, expectedVersion?: number): Promise<boolean> {
    const outcome = await this.db.write((): 'deleted' | 'absent' | 'conflict' => {
      this.beforeWrite();
      if (expectedVersion === undefined) {
        return this.db.statement(`DELETE FROM ${this.table} WHERE id = ?`).run(id).changes > 0
          ? 'deleted'
          : 'absent';
      }
      const { changes } = this.db
        .statement(`DELETE FROM ${this.table} WHERE id = ? AND version = ?`)
        .run(id, expectedVersion);
      if (changes > 0) return 'deleted';
      return this.db.statement(`SELECT 1 FROM ${this.table} WHERE id = ?`).get(id) === undefined
        ? 'absent'
        : 'conflict';
    });
    if (outcome === 'conflict') throw new StoreConflictError(this.name, id);
    return outcome === 'deleted';
  }

  async find(query: FindQuery<T> = {}): Promise<Versioned<T>[]> {
    const cache = this.readCache();
    const key = cache === undefined ? '' : JSON.stringify(query);
    const hit = cache?.finds.get(key);
    if (hit !== undefined) return hit as Versioned<T>[];
    const found = this.findRows(query);
    return cache === undefined ? found : (remember(cache.finds, key, found, 'finds') as Versioned<T>[]);
  }

  private findRows(query: FindQuery<T>): Versioned<T>[] {
    const { clauses, params } = this.visibleWhere(query.where);
    let sql = `SELECT version, body FROM ${this.table}${whereSql(clauses)}`;
    if (query.orderBy !== undefined) {
      const direction = query.orderBy.direction === 'desc' ? 'DESC' : 'ASC';
      sql += ` ORDER BY ${jsonField(query.orderBy.field)} ${direction}, id ${direction}`;
    } else {
      sql += ' ORDER BY id';
    }
    sql += pageSql(query.limit, query.offset, params);
    return (this.db.statement(sql).all(...params) as Row[]).map((row) => toVersioned<T>(row));
  }

  async count(where?: Where<T>): Promise<number> {
    const { clauses, params } = this.visibleWhere(where);
    const row = this.db
      .statement(`SELECT count(*) AS n FROM ${this.table}${whereSql(clauses)}`)
      .get(...params) as {
      n: number;
    };
    return row.n;
  }

  private visibleWhere(where: Where<T> | undefined): { clauses: string[]; params: SqlValue[] } {
    const { clauses, params } = whereConditions(where);
    return { clauses: [this.visibleSql(), ...clauses], params: [this.nowMs(), ...params] };
  }

  /** Hidden once the ttl is in the past, whether or not a purge has removed the row yet. */
  private visibleSql(): string {
    return '(expires_at IS NULL OR expires_at >= ?)';
  }

  /**
   * Runs first in every write, inside its batch: the table's cached answers are gone (read-cache.ts),
   * and expired documents are purged (an indexed, usually empty delete) so that one no longer
   * blocks re-inserting its id or unique values, and expired rows do not pile up.
   */
  private beforeWrite(): void {
    this.db.reads.forget(this.bareTable);
    if (this.ttlField === undefined) return;
    this.db.statement(`DELETE FROM ${this.table} WHERE expires_at < ?`).run(this.nowMs());
  }

  private writeOrDuplicate<R>(id: string, write: () => R): R {
    try {
      return write();
    } catch (err) {
      if (isUniqueViolation(err)) throw new StoreDuplicateError(this.name, id);
      throw err;
    }
  }

  private serialize(doc: T): { id: string; body: string; expiresAt: number | null } {
    if (typeof doc?.id !== 'string' || doc.id === '') {
      throw new TypeError(`${this.name}: a document needs a non-empty string id`);
    }
    return { id: doc.id, body: JSON.stringify(doc), expiresAt: this.expiresAt(doc) };
  }

  private expiresAt(doc: T): number | null {
    if (this.ttlField === undefined) return null;
    const raw = (doc as unknown as Record<string, unknown>)[this.ttlField];
    if (raw === undefined || raw === null) return null;
    const ms = typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
    if (Number.isNaN(ms)) {
      throw new TypeError(
        `${this.name}: ttl field '${this.ttlField}' must be an ISO timestamp, got ${JSON.stringify(raw)}`,
      );
    }
    return ms;
  }

  private nowMs(): number {
    return this.clock().getTime();
  }
}

function toVersioned<T>(row: Row): Versioned<T> {
  return { doc: JSON.parse(row.body) as T, version: row.version };
}
