import { StoreConflictError, StoreDuplicateError } from '../store.ts';
import type { Collection, CollectionOptions, Doc, FindQuery, Versioned, Where } from '../store.ts';
import type { MongoHandle } from './mongo-handle.ts';
import { isDuplicateKey } from './mongo-handle.ts';
import { optimisticUpdate } from './optimistic-update.ts';
import {
  assertMongoName,
  collectionSort,
  encodeJson,
  expiredFilter,
  expiryOf,
  fieldPath,
  pageBounds,
  queryableFields,
  visibleFilter,
  whereFilter,
} from './mongo-query.ts';

/** The stored shape; see `mongo-query.ts`. */
interface StoredDoc {
  _id: string;
  _v: number;
  body: string;
  f: Record<string, unknown>;
  _expires?: Date;
}

type Contents = Omit<StoredDoc, '_id' | '_v'>;

/** A concurrent upsert creating the same id can lose the insert race once; then it matches. */
const UPSERT_ATTEMPTS = 3;

/**
 * A collection is one MongoDB collection `c_<name>`. Every port write is one single-document
 * atomic operation (insertOne, replaceOne, findOneAndUpdate or deleteOne, the version in the
 * filter where the port asks for one), so no transaction is needed: optimistic concurrency is
 * `_v` in the filter.
 *
 * Unique indexes are partial (`{ 'f.x': { $exists: true } }`) and `f` never holds nulls, so
 * documents without the field (or with null) never collide, as in the embedded adapter.
 *
 * TTL: the ttl field is shadowed as a BSON Date `_expires` with a TTL index (expireAfterSeconds
 * 0) that purges in the background. That monitor runs only about once a minute, so reads also
 * filter on the injected clock, and writes first delete what is already expired so an expired
 * document never blocks its id or a unique value, exactly as the embedded adapter does.
 */
export class MongoCollection<T extends Doc> implements Collection<T> {
  private readonly mongoName: string;
  private readonly ttlField: string | undefined;
  /** Index creation, started once per opened handle; every operation waits for it. */
  private readonly ready: Promise<void>;

  constructor(
    private readonly handle: MongoHandle,
    private readonly name: string,
    options: CollectionOptions<T>,
    private readonly clock: () => Date,
  ) {
    this.mongoName = `c_${assertMongoName('collection', name)}`;
    this.ttlField = options.ttlField === undefined ? undefined : assertMongoName('field', options.ttlField);
    const indexes = (options.indexes ?? []).map(({ field, unique }) => ({
      field,
      path: fieldPath(field),
      unique: unique === true,
    }));
    const coll = handle.collection<StoredDoc>(this.mongoName);
    const ttl = this.ttlField !== undefined;
    this.ready = (async () => {
      for (const { field, path, unique } of indexes) {
        // Distinct names for unique and plain indexes, as the embedded adapter gives them.
        await (unique
          ? coll.createIndex(
              { [path]: 1 },
              { name: `u_${field}`, unique: true, partialFilterExpression: { [path]: { $exists: true } } },
            )
          : coll.createIndex({ [path]: 1 }, { name: `i_${field}` }));
      }
      if (ttl) await coll.createIndex({ _expires: 1 }, { name: 'ttl__expires', expireAfterSeconds: 0 });
    })();
    // Reported by the first operation that awaits it; never an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  async get(id: string): Promise<Versioned<T> | null> {
    const coll = await this.coll();
    const found = await coll.findOne({ _id: id, ...visibleFilter(this.clock()) });
    return found === null ? null : toVersioned<T>(found);
  }

  async insert(doc: T): Promise<Versioned<T>> {
    const { id, json, contents } = this.serialize(doc);
    const coll = await this.coll();
    await this.purgeExpired();
    try {
      await coll.insertOne({ _id: id, _v: 1, ...contents });
    } catch (err) {
      throw this.duplicateOr(err, id);
    }
    return { doc: json, version: 1 };
  }

  async replace(doc: T, expectedVersion: number): Promise<Versioned<T>> {
    const { id, json, contents } = this.serialize(doc);
    const coll = await this.coll();
    await this.purgeExpired();
    let matched: number;
    try {
      const filter = { _id: id, _v: expectedVersion, ...visibleFilter(this.clock()) };
      matched = (await coll.replaceOne(filter, { _v: expectedVersion + 1, ...contents })).matchedCount;
    } catch (err) {
      throw this.duplicateOr(err, id);
    }
    if (matched === 0) throw new StoreConflictError(this.name, id);
    return { doc: json, version: expectedVersion + 1 };
  }

  /**
   * Last writer wins in one atomic `findOneAndUpdate` upsert: `$inc` on a missing `_v` (the
   * insert case) sets it to 1. Safe as a `$set` because `body` is text and `f`'s keys are plain
   * identifiers (see `mongo-query.ts`).
   */
  async upsert(doc: T): Promise<Versioned<T>> {
    const { id, json, contents } = this.serialize(doc);
    const coll = await this.coll();
    await this.purgeExpired();
    const update = {
      $inc: { _v: 1 },
      $set: contents,
      ...(contents._expires === undefined ? { $unset: { _expires: '' as const } } : {}),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const stored = await coll.findOneAndUpdate({ _id: id }, update, {
          upsert: true,
          returnDocument: 'after',
          projection: { _v: 1 },
        });
        if (stored === null) throw new Error(`${this.name}: upsert of '${id}' returned no document`);
        return { doc: json, version: stored._v };
      } catch (err) {
        // Two upserts creating one id: the loser's insert can hit the `_id` index (servers retry
        // that themselves since 4.2), and its retry matches the winner's document. A unique-index
        // clash fails every attempt and is reported as the duplicate it is.
        if (!isDuplicateKey(err) || attempt >= UPSERT_ATTEMPTS) throw this.duplicateOr(err, id);
      }
    }
  }

  /** The optimistic read-then-write loop of `optimisticUpdate` (no lock spans two operations). */
  async update(id: string, change: (current: Versioned<T> | null) => T | null): Promise<Versioned<T> | null> {
    return optimisticUpdate(this, this.name, id, change);
  }

  async delete(id: string, expectedVersion?: number): Promise<boolean> {
    const coll = await this.coll();
    const visible = visibleFilter(this.clock());
    if (expectedVersion === undefined) {
      return (await coll.deleteOne({ _id: id, ...visible })).deletedCount > 0;
    }
    if ((await coll.deleteOne({ _id: id, _v: expectedVersion, ...visible })).deletedCount > 0) return true;
    const exists = (await coll.findOne({ _id: id, ...visible }, { projection: { _id: 1 } })) !== null;
    if (exists) throw new StoreConflictError(this.name, id);
    return false;
  }

  async find(query: FindQuery<T> = {}): Promise<Versioned<T>[]> {
    const page = pageBounds(query.limit, query.offset);
    const filter = { ...whereFilter(query.where), ...visibleFilter(this.clock()) };
    const sort = collectionSort(query.orderBy);
    const coll = await this.coll();
    if (page.empty) return [];
    let cursor = coll.find(filter).sort(sort);
    if (page.skip !== undefined) cursor = cursor.skip(page.skip);
    if (page.limit !== undefined) cursor = cursor.limit(page.limit);
    return (await cursor.toArray()).map((stored) => toVersioned<T>(stored));
  }

  async count(where?: Where<T>): Promise<number> {
    const filter = { ...whereFilter(where), ...visibleFilter(this.clock()) };
    const coll = await this.coll();
    return coll.countDocuments(filter);
  }

  /** The driver collection once indexes exist; rejects after `close()`. */
  private async coll() {
    const coll = this.handle.collection<StoredDoc>(this.mongoName);
    await this.ready;
    return coll;
  }

  /**
   * An indexed, usually empty delete (the `_expires` TTL index) of what the monitor has not
   * purged yet, so it cannot block re-inserting its id or its unique values.
   */
  private async purgeExpired(): Promise<void> {
    if (this.ttlField === undefined) return;
    await this.handle.collection<StoredDoc>(this.mongoName).deleteMany(expiredFilter(this.clock()));
  }

  private duplicateOr(err: unknown, id: string): unknown {
    return isDuplicateKey(err) ? new StoreDuplicateError(this.name, id) : err;
  }

  private serialize(doc: T): { id: string; json: T; contents: Contents } {
    if (typeof doc?.id !== 'string' || doc.id === '') {
      throw new TypeError(`${this.name}: a document needs a non-empty string id`);
    }
    const { body, json } = encodeJson(doc, `${this.name}: a document`);
    const fields = json as unknown as Record<string, unknown>;
    const expires = expiryOf(fields, this.ttlField, this.name);
    return {
      id: doc.id,
      json,
      contents: { body, f: queryableFields(fields), ...(expires === undefined ? {} : { _expires: expires }) },
    };
  }
}

function toVersioned<T>(stored: StoredDoc): Versioned<T> {
  return { doc: JSON.parse(stored.body) as T, version: stored._v };
}
