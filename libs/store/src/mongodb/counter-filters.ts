import type { Document } from 'mongodb';
import { prefixUpperBound } from '../prefix-range.ts';
import { expiredFilter, visibleFilter } from './mongo-query.ts';

/**
 * The filters of the MongoDB counters, pure so they are unit-tested here (MongoDB itself cannot
 * run on this project's machines). A counter is `{_id: key, value, _expires?: Date}`; `_expires`
 * carries a TTL index (expireAfterSeconds 0), and reads hide an expired counter before the TTL
 * monitor (which runs about once a minute) removes it.
 */

/** One live counter: the key, not expired at `now`. */
export function liveCounter(key: string, now: Date): Document {
  return { _id: key, ...visibleFilter(now) };
}

/** The counter, only if it has expired: deleted before an add, which then starts from 0. */
export function expiredCounter(key: string, now: Date): Document {
  return { _id: key, ...expiredFilter(now) };
}

/**
 * Live counters under `prefix`: an `_id` range (`$gte` prefix, `$lt` its upper bound), which the
 * `_id` index answers; MongoDB compares strings by UTF-8 bytes, the order `prefixUpperBound` uses.
 */
export function liveCountersUnder(prefix: string, now: Date): Document {
  const bound = prefixUpperBound(prefix);
  return { _id: bound === null ? { $gte: prefix } : { $gte: prefix, $lt: bound }, ...visibleFilter(now) };
}

/** The `$set` of an add that gives an expiry (none when it gives none: the counter keeps its own). */
export function expirySet(expiresAt: string | undefined): Document {
  if (expiresAt === undefined) return {};
  const at = new Date(expiresAt);
  if (Number.isNaN(at.getTime())) throw new TypeError(`counters: expiresAt must be an ISO timestamp, got ${JSON.stringify(expiresAt)}`);
  return { $set: { _expires: at } };
}
