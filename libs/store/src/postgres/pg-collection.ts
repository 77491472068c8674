import { StoreConflictError, StoreDuplicateError } from '../store.ts';
import type { Collection, CollectionOptions, Doc, FindQuery, Versioned, Where } from '../store.ts';
import { optimisticUpdate } from '../mongodb/optimistic-update.ts';
import type { PgHandle } from './pg-handle.ts';
import { isUniqueViolation } from './pg-handle.ts';
import {
  assertPgName,
  encodeJson,
  expiryOf,
  fieldExpr,
  pageSql,
  pgCollectionTableSql,
  pgFieldIndexSql,
  quoteIdent,
  whereConditions,
  whereSql,
} from './pg-sql.ts';
import type { Lazy } from './lazy.ts';
import { ensureTables } from './ensure-tables.ts';
import { remember, type TableReadCache } from '../read-cache-table.ts';
import { READ_VERSION_FUNCTION, READ_VERSION_TRIGGER, type PgReadVersions } from './pg-read-versions.ts';

interface Row {
  version: number;
  doc: unknown;
}

/**
 * A collection is one table `c_<name>` (id text primary key, version integer, doc jsonb,
 * expires_at timestamptz), created with its indexes on first use (`CREATE ... IF NOT EXISTS`
 * under the schema lock, see `PgHandle.underSchemaLock`). Every port write is one statement:
 * optimistic concurrency is `version` in the UPDATE/DELETE's WHERE, `upsert` one
 * `INSERT ... ON CONFLICT (id) DO UPDATE`. `update` is the optimistic loop the MongoDB adapter
 * uses (`optimisticUpdate`): no row lock is held while the caller's `change` runs.
 *
 * Indexes are expression indexes on `fieldExpr` (`NULLIF(doc->'f', 'null')`): a missing field
 * and a JSON null are both SQL NULL there, so `where: {f: null}` is `IS NULL` and a unique index
 * never makes two absent or null values collide, as in the other adapters.
 *
 * TTL: `expires_at` shadows the ttl field; reads hide rows past it by the injected clock. An
 * expired document never blocks its id or a unique value: in a collection with a unique index,
 * inserts, upserts and replaces first delete what has expired (an indexed, usually empty delete);
 * without one, an insert or upsert takes over an expired row of its id in the same statement
 * (`ON CONFLICT (id) DO UPDATE ... WHERE` expired), and a replace never matches an expired row
 * itself. The store's purge timer removes the rest.
 *
 * `readMostly` (without a ttl): answers are kept in memory between writes, exact across every
 * process on the database (pg-read-versions.ts): the table carries a statement trigger that bumps
 * its write version, and a cached read waits for a look at the versions sent after it was asked.
 */
export class PgCollection<T extends Doc> implements Collection<T> {
  readonly table: string;
  private readonly ttlField: string | undefined;
  private readonly ready: Lazy;
  /** Whether a unique index could make an expired row block a write (then writes purge first). */
  private readonly hasUniqueIndex: boolean;
  /**
   * A ttl collection without a unique index: only its own id can be held by an expired row, so an
   * insert or upsert takes such a row over in its one statement instead of purging first.
   */
  private readonly takesOverExpired: boolean;
  /** The table's bare name (as the trigger reports it), when its answers are cached. */
  private readonly cachedAs: string | undefined;
  /** The reads `update` makes: never from the cache (its `change` may be handed a document to change). */
  private readonly uncached: Pick<Collection<T>, 'get' | 'insert' | 'replace'>;

  constructor(
    private readonly handle: PgHandle,
    schema: string,
    private readonly name: string,
    options: CollectionOptions<T>,
    private readonly clock: () => Date,
    private readonly reads: PgReadVersions,
  ) {
    const bare = `c_${assertPgName('collection', name)}`;
    this.table = `${quoteIdent(schema)}.${quoteIdent(bare)}`;
    this.ttlField = options.ttlField === undefined ? undefined : assertPgName('field', options.ttlField);
    // A ttl hides documents as time passes, with no write to bump the version: not cached.
    this.cachedAs = options.readMostly === true && this.ttlField === undefined ? bare : undefined;
    this.hasUniqueIndex = (options.indexes ?? []).some(({ unique }) => unique === true);
    this.takesOverExpired = this.ttlField !== undefined && !this.hasUniqueIndex;
    const base = pgCollectionTableSql(schema, bare);
    const indexes = (options.indexes ?? []).map(({ field, unique }) => pgFieldIndexSql(schema, bare, unique ? 'u' : 'i', field));
    const trigger = this.cachedAs === undefined ? [] : [{ table: this.table, name: READ_VERSION_TRIGGER }];
    this.ready = ensureTables(
      handle,
      [...base.objects, ...indexes.map(({ object }) => object)],
      [
        ...base.ddl,
        ...indexes.map(({ ddl }) => ddl),
        ...trigger.flatMap(({ table, name: triggerName }) => [
          `DROP TRIGGER IF EXISTS ${triggerName} ON ${table}`,
          `CREATE TRIGGER ${triggerName} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table} ` +
            `FOR EACH STATEMENT EXECUTE FUNCTION ${quoteIdent(schema)}.${READ_VERSION_FUNCTION}()`,
        ]),
      ],
      trigger,
    );
    this.uncached = {
      get: (id) => this.getRow(id),
      insert: (doc) => this.insert(doc),
      replace: (doc, v) => this.replace(doc, v),
    };
  }

  get hasTtl(): boolean {
    return this.ttlField !== undefined;
  }

  async get(id: string): Promise<Versioned<T> | null> {
    const cache = await this.readCache();
    if (cache === undefined) return this.getRow(id);
    const hit = cache.docs.get(id);
    if (hit !== undefined) return hit as Versioned<T>;
    const found = await this.getRow(id);
    return found === null ? null : (remember(cache.docs, id, found, 'docs') as Versioned<T>);
  }

  /** The table's read cache, as of a look at the versions sent after this call; undefined when not cached. */
  private async readCache(): Promise<TableReadCache | undefined> {
    if (this.cachedAs === undefined) return undefined;
    // The trigger the cache relies on exists before the first look.
    await this.ready.get();
    return this.reads.tableFor(this.cachedAs);
  }

  private async getRow(id: string): Promise<Versioned<T> | null> {
    const rows = await this.query<Row>(`SELECT version, doc FROM ${this.table} WHERE id = $1 AND ${visibleSql('$2')}`, [
      id,
      this.clock(),
    ]);
    return rows[0] === undefined ? null : toVersioned<T>(rows[0]);
  }

  async insert(doc: T): Promise<Versioned<T>> {
    const { id, text, json, expiresAt } = this.serialize(doc);
    if (this.takesOverExpired) {
      // One statement: an expired row's id is taken over (only a live row is a duplicate).
      const rows = await this.write(
        id,
        `INSERT INTO ${this.table} AS t (id, version, doc, expires_at) VALUES ($1, 1, $2::jsonb, $3) ` +
          'ON CONFLICT (id) DO UPDATE SET version = 1, doc = excluded.doc, expires_at = excluded.expires_at ' +
          'WHERE t.expires_at < $4 RETURNING version',
        [id, text, expiresAt, this.clock()],
      );
      if (rows.length === 0) throw new StoreDuplicateError(this.name, id);
      return { doc: json, version: 1 };
    }
    await this.purgeExpired();
    await this.write(id, `INSERT INTO ${this.table} (id, version, doc, expires_at) VALUES ($1, 1, $2::jsonb, $3)`, [
      id,
      text,
      expiresAt,
    ]);
    return { doc: json, version: 1 };
  }

  async replace(doc: T, expectedVersion: number): Promise<Versioned<T>> {
    const { id, text, json, expiresAt } = this.serialize(doc);
    // An expired row is never replaced (the WHERE below): it can only be in the way of a unique value.
    if (this.hasUniqueIndex) await this.purgeExpired();
    const rows = await this.write(
      id,
      `UPDATE ${this.table} SET version = version + 1, doc = $2::jsonb, expires_at = $3 ` +
        `WHERE id = $1 AND version = $4 AND ${visibleSql('$5')} RETURNING version`,
      [id, text, expiresAt, expectedVersion, this.clock()],
    );
    if (rows.length === 0) throw new StoreConflictError(this.name, id);
    return { doc: json, version: expectedVersion + 1 };
  }

  /** Last writer wins in one statement; a unique-index clash on another field is a duplicate. */
  async upsert(doc: T): Promise<Versioned<T>> {
    const { id, text, json, expiresAt } = this.serialize(doc);
    // Over an expired row the document starts again at version 1, as after a purge.
    const [version, params] = this.takesOverExpired
      ? ['CASE WHEN t.expires_at < $4 THEN 1 ELSE t.version + 1 END', [id, text, expiresAt, this.clock()]]
      : ['t.version + 1', [id, text, expiresAt]];
    if (!this.takesOverExpired) await this.purgeExpired();
    const rows = await this.write<{ version: number }>(
      id,
      `INSERT INTO ${this.table} AS t (id, version, doc, expires_at) VALUES ($1, 1, $2::jsonb, $3) ` +
        `ON CONFLICT (id) DO UPDATE SET version = ${version}, doc = excluded.doc, expires_at = excluded.expires_at ` +
        'RETURNING version',
      params,
    );
    return { doc: json, version: rows[0]!.version };
  }

  async update(id: string, change: (current: Versioned<T> | null) => T | null): Promise<Versioned<T> | null> {
    return optimisticUpdate(this.uncached, this.name, id, change);
  }

  /** One statement: the delete, and whether a (visible) row existed, from the same snapshot. */
  async delete(id: string, expectedVersion?: number): Promise<boolean> {
    const params: unknown[] = [id, this.clock()];
    let versionSql = '';
    if (expectedVersion !== undefined) {
      params.push(expectedVersion);
      versionSql = ' AND version = $3';
    }
    const rows = await this.query<{ deleted: boolean; existed: boolean }>(
      `WITH d AS (DELETE FROM ${this.table} WHERE id = $1 AND ${visibleSql('$2')}${versionSql} RETURNING 1) ` +
        `SELECT EXISTS (SELECT 1 FROM d) AS deleted, EXISTS (SELECT 1 FROM ${this.table} WHERE id = $1 AND ${visibleSql('$2')}) AS existed`,
      params,
    );
    const { deleted, existed } = rows[0]!;
    if (deleted) return true;
    if (existed && expectedVersion !== undefined) throw new StoreConflictError(this.name, id);
    return false;
  }

  async find(query: FindQuery<T> = {}): Promise<Versioned<T>[]> {
    const cache = await this.readCache();
    if (cache === undefined) return this.findRows(query);
    const key = JSON.stringify(query);
    const hit = cache.finds.get(key);
    if (hit !== undefined) return hit as Versioned<T>[];
    return remember(cache.finds, key, await this.findRows(query), 'finds') as Versioned<T>[];
  }

  private async findRows(query: FindQuery<T>): Promise<Versioned<T>[]> {
    const params: unknown[] = [this.clock()];
    const clauses = [visibleSql('$1'), ...whereConditions('doc', query.where, params)];
    const order = query.orderBy;
    const direction = order?.direction === 'desc' ? 'DESC' : 'ASC';
    // Missing/null first ascending (as SQLite and MongoDB order them), then by id for stable pages.
    const orderSql =
      order === undefined
        ? ' ORDER BY id'
        : ` ORDER BY ${fieldExpr('doc', order.field)} ${direction} NULLS ${direction === 'ASC' ? 'FIRST' : 'LAST'}, id ${direction}`;
    const page = pageSql(query.limit, query.offset, params);
    const rows = await this.query<Row>(`SELECT version, doc FROM ${this.table}${whereSql(clauses)}${orderSql}${page}`, params);
    return rows.map((row) => toVersioned<T>(row));
  }

  async count(where?: Where<T>): Promise<number> {
    const params: unknown[] = [this.clock()];
    const clauses = [visibleSql('$1'), ...whereConditions('doc', where, params)];
    const rows = await this.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.table}${whereSql(clauses)}`, params);
    return Number(rows[0]!.n);
  }

  /** Deletes every expired row (the purge timer and writes to a ttl collection). */
  async purgeExpired(): Promise<void> {
    if (this.ttlField === undefined) return;
    await this.query(`DELETE FROM ${this.table} WHERE expires_at < $1`, [this.clock()]);
  }

  private async query<R extends object>(text: string, params: unknown[]): Promise<R[]> {
    await this.ready.get();
    return this.handle.query<R & Record<string, unknown>>(text, params);
  }

  private async write<R extends object>(id: string, text: string, params: unknown[]): Promise<R[]> {
    try {
      return await this.query<R>(text, params);
    } catch (err) {
      throw isUniqueViolation(err) ? new StoreDuplicateError(this.name, id) : err;
    }
  }

  private serialize(doc: T): { id: string; text: string; json: T; expiresAt: Date | null } {
    if (typeof doc?.id !== 'string' || doc.id === '') {
      throw new TypeError(`${this.name}: a document needs a non-empty string id`);
    }
    const { text, json } = encodeJson(doc, `${this.name}: a document`);
    const expiresAt = expiryOf(json as unknown as Record<string, unknown>, this.ttlField, this.name);
    return { id: doc.id, text, json, expiresAt };
  }
}

/** Visible = no expiry, or an expiry not before the clock's now (bound as `param`). */
function visibleSql(param: string): string {
  return `(expires_at IS NULL OR expires_at >= ${param})`;
}

function toVersioned<T>(row: Row): Versioned<T> {
  return { doc: row.doc as T, version: row.version };
}
