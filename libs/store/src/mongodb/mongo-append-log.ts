import { setTimeout as sleep } from 'node:timers/promises';
import type { AppendLog, DropOptions, LogEntry, LogListQuery, LogOptions } from '../store.ts';
import type { MongoHandle } from './mongo-handle.ts';
import { isDuplicateKey } from './mongo-handle.ts';
import { assertMongoName, fieldPath, pageBounds, queryableFields, whereFilter } from './mongo-query.ts';
import { appendOptimistically, jitterMs } from './optimistic-append.ts';
import type { SerialQueue } from './optimistic-append.ts';

/** The stored shape; see `mongo-query.ts`. `_id` is the seq, so the `_id` index serializes writers. */
interface StoredEntry {
  _id: number;
  body: string;
  f: Record<string, unknown>;
}

/**
 * An append log is one MongoDB collection `l_<name>` of `{ _id: seq, body, f }`. `append` is the
 * optimistic loop of `appendOptimistically` (read tip, build, insert `_id = seq`, retry on a
 * duplicate key): one single-document insert per attempt, so no transaction is needed. Appends
 * from this process to the same log also pass through one `SerialQueue`, so only other
 * processes ever contend. Declared `indexes` become single-field indexes on `f.<field>`.
 */
export class MongoAppendLog<T extends object> implements AppendLog<T> {
  private readonly mongoName: string;
  private readonly ready: Promise<void>;

  constructor(
    private readonly handle: MongoHandle,
    private readonly name: string,
    options: LogOptions<T>,
    private readonly queue: SerialQueue,
  ) {
    this.mongoName = `l_${assertMongoName('log', name)}`;
    const fields = (options.indexes ?? []).map((field) => ({ field, path: fieldPath(field) }));
    const coll = handle.collection<StoredEntry>(this.mongoName);
    this.ready = (async () => {
      for (const { field, path } of fields) await coll.createIndex({ [path]: 1 }, { name: `i_${field}` });
    })();
    // Reported by the first operation that awaits it; never an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  async append(build: (tip: LogEntry<T> | null) => T): Promise<LogEntry<T>> {
    const coll = await this.coll();
    return this.queue.run(() =>
      appendOptimistically<T>(
        {
          readTip: () => this.readTip(),
          tryInsert: async (seq, { body, json }) => {
            try {
              await coll.insertOne({ _id: seq, body, f: queryableFields(json as Record<string, unknown>) });
              return true;
            } catch (err) {
              // `_id` is the only unique index here, so a duplicate key means seq was taken.
              if (isDuplicateKey(err)) return false;
              throw err;
            }
          },
          backoff: (attempt) => sleep(jitterMs(attempt)),
        },
        build,
        this.name,
      ),
    );
  }

  async tip(): Promise<LogEntry<T> | null> {
    return this.readTip();
  }

  async count(): Promise<number> {
    return (await this.coll()).countDocuments({});
  }

  async list(query: LogListQuery<T> = {}): Promise<LogEntry<T>[]> {
    const page = pageBounds(query.limit, undefined);
    const filter = whereFilter(query.where);
    if (query.since !== undefined) {
      const path = fieldPath(query.since.field);
      const lowerBound = { $gte: query.since.value };
      // A where on the same field keeps its equality and gains the lower bound.
      filter[path] = path in filter ? { $eq: filter[path], ...lowerBound } : lowerBound;
    }
    const coll = await this.coll();
    if (page.empty) return [];
    let cursor = coll.find(filter).sort({ _id: query.order === 'asc' ? 1 : -1 });
    if (page.limit !== undefined) cursor = cursor.limit(page.limit);
    return (await cursor.toArray()).map((stored) => toEntry<T>(stored));
  }

  async scan(fromSeq: number, limit: number): Promise<LogEntry<T>[]> {
    const page = pageBounds(limit, undefined);
    const coll = await this.coll();
    if (page.empty) return [];
    const found = await coll
      .find({ _id: { $gte: fromSeq } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return found.map((stored) => toEntry<T>(stored));
  }

  async dropBefore(beforeSeq: number, options: DropOptions = {}): Promise<number> {
    const fromSeq = options.fromSeq ?? 1;
    const keep = options.keep ?? [];
    for (const [name, value] of [['beforeSeq', beforeSeq], ['fromSeq', fromSeq], ...keep.map((k) => ['keep', k] as const)] as const) {
      if (!Number.isSafeInteger(value)) throw new TypeError(`dropBefore: ${name} must be an integer seq, not ${String(value)}`);
    }
    const coll = await this.coll();
    // The newest entry stays: read the tip first and stop below it. Tips only grow, so an append
    // racing with this delete lands above the bound and is untouched, and `appendOptimistically`
    // keeps its proof (the entry it builds on is never removed while it is the tip).
    const tip = await coll.findOne({}, { sort: { _id: -1 }, projection: { _id: 1 } });
    if (tip === null) return 0;
    const upper = Math.min(beforeSeq, tip._id);
    if (upper <= fromSeq) return 0;
    const range: Record<string, unknown> = { $gte: fromSeq, $lt: upper };
    if (keep.length > 0) range.$nin = [...keep];
    // deleteMany is not atomic across documents: a crash part-way leaves some of the range, which
    // a re-run removes (callers drop ranges they have already made safe to lose, e.g. archived).
    const { deletedCount } = await coll.deleteMany({ _id: range });
    return deletedCount;
  }

  private async readTip(): Promise<LogEntry<T> | null> {
    const stored = await (await this.coll()).findOne({}, { sort: { _id: -1 } });
    return stored === null ? null : toEntry<T>(stored);
  }

  /** The driver collection once indexes exist; rejects after `close()`. */
  private async coll() {
    const coll = this.handle.collection<StoredEntry>(this.mongoName);
    await this.ready;
    return coll;
  }
}

function toEntry<T>(stored: StoredEntry): LogEntry<T> {
  return { ...(JSON.parse(stored.body) as T), seq: stored._id };
}
