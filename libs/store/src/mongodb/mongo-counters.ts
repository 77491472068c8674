import { MongoBulkWriteError } from 'mongodb';
import type { CounterAddOptions, CounterDelta, Counters } from '../store.ts';
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

const COLLECTION = 'counters';
/** A concurrent first add of the same key can lose the upsert's insert race once; then it matches. */
const UPSERT_ATTEMPTS = 3;

/**
 * Counters are documents `{ _id: key, value, _expires? }` in one `counters` collection. An add
 * without a limit is one `$inc` upsert; with a limit it is the conditional-update loop of
 * `addWithinLimit`. Both are single-document atomic writes, so the limit holds across processes
 * with no transaction. `addMany` is one unordered `bulkWrite` of upserting `$inc`s: each key is
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

  async add(key: string, delta: number, options: CounterAddOptions = {}): Promise<{ value: number; applied: boolean }> {
    const { limit } = options;
    if (!Number.isSafeInteger(delta))
      throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    if (limit !== undefined && Number.isNaN(limit)) throw new RangeError('counters: limit must be a number');
    const expiry = expirySet(options.expiresAt);
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
