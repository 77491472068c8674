import { onceUntil } from '../counter-once.ts';
import { MongoBulkWriteError, type ClientSession, type Document } from 'mongodb';
import type { CounterAddOptions, CounterAddResult, CounterDelta, CounterOnce, Counters, CounterWithdrawal } from '../store.ts';
import { bulkIncrement } from './bulk-increment.ts';
import { expiredCounter, expirySet, liveCounter, liveCountersUnder } from './counter-filters.ts';
import type { MongoHandle } from './mongo-handle.ts';
import { isDuplicateKey } from './mongo-handle.ts';
import { addWithinLimit } from './limited-add.ts';

interface StoredCounter {
  _id: string;
  value: number;
  /** The counter's expiry (CounterAddOptions.expiresAt), under a TTL index. */
  _expires?: Date;
}

/** The use of an idempotent add's id (CounterAddOptions.once), removed by a TTL index after `_expires`. */
interface StoredOnce {
  _id: string;
  key: string | null;
  delta: number;
  state: 'applied' | 'withdrawn' | 'prevented';
  _expires: Date;
}

const COLLECTION = 'counters';
const ONCE_COLLECTION = 'counter_once';
/** A concurrent first add of the same key can lose the upsert's insert race once; then it matches. */
const UPSERT_ATTEMPTS = 3;

/**
 * Counters are documents `{ _id: key, value, _expires? }` in one `counters` collection. An add
 * without a limit is one `$inc` upsert; with a limit it is the conditional-update loop of
 * `addWithinLimit`. Both are single-document atomic writes, so the limit holds across processes
 * with no transaction (an add under an id and a withdrawal are the exception: `addOnce`). `addMany` is one unordered `bulkWrite` of upserting `$inc`s: each key is
 * atomic, the batch is not (no multi-document transaction, which would need a replica set).
 * An expired counter is hidden from reads, deleted before an add to it (which starts from 0), and
 * removed by the TTL index on `_expires` otherwise; prefix reads are `_id` ranges (counter-filters.ts).
 */
export class MongoCounters implements Counters {
  private ready: Promise<unknown> | null = null;

  constructor(
    private readonly handle: MongoHandle,
    private readonly clock: () => Date,
  ) {}

  async add(key: string, delta: number, options: CounterAddOptions = {}): Promise<CounterAddResult> {
    const { limit } = options;
    if (!Number.isSafeInteger(delta))
      throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    if (limit !== undefined && Number.isNaN(limit)) throw new RangeError('counters: limit must be a number');
    const expiry = expirySet(options.expiresAt);
    if (options.once !== undefined) return this.addOnce(key, delta, limit, expiry, options.once);
    const coll = await this.collection();
    // An expired counter starts over: it goes first, so the add below never continues it.
    await coll.deleteOne(expiredCounter(key, this.clock()));
    const inc = { $inc: { value: delta }, ...expiry };
    if (limit !== undefined) {
      return addWithinLimit(
        {
          incrementIfAtMost: async (ceiling) =>
            (
              await coll.findOneAndUpdate(
                { ...liveCounter(key, this.clock()), value: { $lte: ceiling } },
                inc,
                { returnDocument: 'after' },
              )
            )?.value ?? null,
          read: async () => (await coll.findOne(liveCounter(key, this.clock())))?.value ?? null,
          insertIfAbsent: async (value) => {
            try {
              const expires = (expiry.$set as { _expires?: Date } | undefined)?._expires;
              await coll.insertOne({ _id: key, value, ...(expires === undefined ? {} : { _expires: expires }) });
              return true;
            } catch (err) {
              if (isDuplicateKey(err)) return false;
              throw err;
            }
          },
        },
        key,
        delta,
        limit,
      );
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const stored = await coll.findOneAndUpdate({ _id: key }, inc, { upsert: true, returnDocument: 'after' });
        if (stored === null) throw new Error(`counters: upsert of '${key}' returned no document`);
        return { value: stored.value, applied: true };
      } catch (err) {
        // Two first adds of one key: the loser's insert hits `_id` and a retry matches the winner's.
        if (!isDuplicateKey(err) || attempt >= UPSERT_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * An add under an id: one transaction reads the id's use and the counter, then writes both (a
   * concurrent write to either makes MongoDB retry the transaction), so the add applies at most
   * once per id. Transactions need a replica set (docs/architecture.md "Store (MongoDB)").
   */
  private async addOnce(key: string, delta: number, limit: number | undefined, expiry: Document, once: CounterOnce): Promise<CounterAddResult> {
    const coll = await this.collection();
    const used = await this.onceCollection();
    const until = onceUntil(once);
    return this.handle.transaction(async (session): Promise<CounterAddResult> => {
      const now = this.clock();
      const current = (await coll.findOne(liveCounter(key, now), { session }))?.value ?? null;
      const value = current ?? 0;
      if ((await used.findOne({ _id: once.id, _expires: { $gte: now } }, { session })) !== null) return { value, applied: false, repeated: true };
      const next = value + delta;
      if (limit !== undefined && next > limit) return { value, applied: false };
      if (!Number.isSafeInteger(next)) throw new RangeError(`counters: '${key}' would overflow`);
      await this.setValue(key, next, current === null, expiry, session);
      await used.replaceOne({ _id: once.id }, { key, delta, state: 'applied', _expires: until }, { upsert: true, session });
      return { value: next, applied: true };
    });
  }

  async withdraw(once: CounterOnce): Promise<CounterWithdrawal> {
    const coll = await this.collection();
    const used = await this.onceCollection();
    const until = onceUntil(once);
    return this.handle.transaction(async (session): Promise<CounterWithdrawal> => {
      const now = this.clock();
      const row = await used.findOne({ _id: once.id, _expires: { $gte: now } }, { session });
      if (row === null) {
        await used.replaceOne({ _id: once.id }, { key: null, delta: 0, state: 'prevented', _expires: until }, { upsert: true, session });
        return 'prevented';
      }
      if (row.state !== 'applied' || row.key === null) return 'already';
      const current = (await coll.findOne(liveCounter(row.key, now), { session }))?.value ?? null;
      await this.setValue(row.key, (current ?? 0) - row.delta, current === null, {}, session);
      await used.updateOne({ _id: once.id }, { $set: { state: 'withdrawn' } }, { session });
      return 'withdrawn';
    });
  }

  /** Inside a transaction: the counter set to `value`; a counter that was absent or expired loses its old expiry. */
  private async setValue(key: string, value: number, fresh: boolean, expiry: Document, session: ClientSession): Promise<void> {
    const coll = await this.collection();
    const set = { value, ...((expiry.$set as Document | undefined) ?? {}) };
    const unset = fresh && !('_expires' in set) ? { $unset: { _expires: '' as const } } : {};
    await coll.updateOne({ _id: key }, { $set: set, ...unset }, { upsert: true, session });
  }

  async addMany(deltas: ReadonlyArray<CounterDelta>): Promise<void> {
    const coll = await this.collection();
    await bulkIncrement(deltas, async (batch) => {
      try {
        await coll.bulkWrite(
          batch.map(({ key, delta }) => ({
            updateOne: { filter: { _id: key }, update: { $inc: { value: delta } }, upsert: true },
          })),
          { ordered: false },
        );
        return [];
      } catch (err) {
        // Unordered: every other operation was still attempted; only lost insert races are retried.
        if (!(err instanceof MongoBulkWriteError)) throw err;
        const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
        if (err.err !== undefined || errors.length === 0 || errors.some((e) => e.code !== 11000)) throw err;
        return errors.map((e) => e.index);
      }
    });
  }

  async get(key: string): Promise<number> {
    const stored = await (await this.collection()).findOne(liveCounter(key, this.clock()));
    return stored?.value ?? 0;
  }

  async list(prefix: string): Promise<Record<string, number>> {
    const found = await (await this.collection()).find(liveCountersUnder(prefix, this.clock())).sort({ _id: 1 }).toArray();
    return Object.fromEntries(found.map((stored) => [stored._id, stored.value]));
  }

  private onceReady: Promise<unknown> | null = null;

  /** The ids of idempotent adds, once their TTL index exists. */
  private async onceCollection() {
    const coll = this.handle.collection<StoredOnce>(ONCE_COLLECTION);
    this.onceReady ??= coll.createIndex({ _expires: 1 }, { name: 'ttl__expires', expireAfterSeconds: 0 }).catch((error: unknown) => {
      this.onceReady = null;
      throw error;
    });
    await this.onceReady;
    return coll;
  }

  /** The collection, once its TTL index exists (created on first use, idempotent). */
  private async collection() {
    const coll = this.handle.collection<StoredCounter>(COLLECTION);
    // A failed attempt (connection down) is not kept: the next operation tries again.
    this.ready ??= coll.createIndex({ _expires: 1 }, { name: 'ttl__expires', expireAfterSeconds: 0 }).catch((error: unknown) => {
      this.ready = null;
      throw error;
    });
    await this.ready;
    return coll;
  }
}
