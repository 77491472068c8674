import { MongoBulkWriteError } from 'mongodb';
import type { CounterDelta, Counters } from '../store.ts';
import { bulkIncrement } from './bulk-increment.ts';
import type { MongoHandle } from './mongo-handle.ts';
import { isDuplicateKey } from './mongo-handle.ts';
import { prefixPattern } from './mongo-query.ts';
import { addWithinLimit } from './limited-add.ts';

interface StoredCounter {
  _id: string;
  value: number;
}

const COLLECTION = 'counters';
/** A concurrent first add of the same key can lose the upsert's insert race once; then it matches. */
const UPSERT_ATTEMPTS = 3;

/**
 * Counters are documents `{ _id: key, value }` in one `counters` collection. An add without a
 * limit is one `$inc` upsert; with a limit it is the conditional-update loop of `addWithinLimit`.
 * Both are single-document atomic writes, so the limit holds across processes with no
 * transaction. `addMany` is one unordered `bulkWrite` of upserting `$inc`s: each key is atomic,
 * the batch is not (no multi-document transaction, which would need a replica set).
 */
export class MongoCounters implements Counters {
  constructor(private readonly handle: MongoHandle) {}

  async add(
    key: string,
    delta: number,
    options: { limit?: number } = {},
  ): Promise<{ value: number; applied: boolean }> {
    const { limit } = options;
    if (!Number.isSafeInteger(delta))
      throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
    if (limit !== undefined && Number.isNaN(limit)) throw new RangeError('counters: limit must be a number');
    const coll = this.handle.collection<StoredCounter>(COLLECTION);
    if (limit !== undefined) {
      return addWithinLimit(
        {
          incrementIfAtMost: async (ceiling) =>
            (
              await coll.findOneAndUpdate(
                { _id: key, value: { $lte: ceiling } },
                { $inc: { value: delta } },
                { returnDocument: 'after' },
              )
            )?.value ?? null,
          read: async () => (await coll.findOne({ _id: key }))?.value ?? null,
          insertIfAbsent: async (value) => {
            try {
              await coll.insertOne({ _id: key, value });
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
        const stored = await coll.findOneAndUpdate(
          { _id: key },
          { $inc: { value: delta } },
          { upsert: true, returnDocument: 'after' },
        );
        if (stored === null) throw new Error(`counters: upsert of '${key}' returned no document`);
        return { value: stored.value, applied: true };
      } catch (err) {
        // Two first adds of one key: the loser's insert hits `_id` and a retry matches the winner's.
        if (!isDuplicateKey(err) || attempt >= UPSERT_ATTEMPTS) throw err;
      }
    }
  }

  async addMany(deltas: ReadonlyArray<CounterDelta>): Promise<void> {
    const coll = this.handle.collection<StoredCounter>(COLLECTION);
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
    const stored = await this.handle.collection<StoredCounter>(COLLECTION).findOne({ _id: key });
    return stored?.value ?? 0;
  }

  async list(prefix: string): Promise<Record<string, number>> {
    const found = await this.handle
      .collection<StoredCounter>(COLLECTION)
      .find({ _id: { $regex: prefixPattern(prefix) } })
      .sort({ _id: 1 })
      .toArray();
    return Object.fromEntries(found.map((stored) => [stored._id, stored.value]));
  }
}
