import type { Document } from 'mongodb';

/**
 * The pure half of the adapter: how port queries become MongoDB filters, sorts and stored
 * shapes. Nothing here talks to a server, so all of it is unit-tested without one.
 *
 * Stored shapes, mirroring the embedded adapter's `body` column plus `json_extract`:
 * - collection document `{ _id: id, _v: version, body: <JSON text>, f: <fields>, _expires?: Date }`
 * - log entry `{ _id: seq, body: <JSON text>, f: <fields> }`
 *
 * `body` is what `get`/`find` return, so any JSON document round-trips exactly, whatever its
 * key names: stored as BSON, keys with `$` or `.` (JSON Schemas in package manifests, agents'
 * memory values) are refused by some servers and update forms, and NUL cannot appear in a BSON
 * key at all. `f` holds the top-level fields that filters, sorts and indexes address as
 * `f.<field>` (see `queryableFields`).
 */

/** Same rule as the embedded adapter, so both accept exactly the same names. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/i;
const MAX_IDENTIFIER_LENGTH = 63;

/**
 * Names become collection names and dotted field paths: a `.` would address a nested field and
 * a `$` an operator, so anything but a plain identifier is refused loudly.
 */
export function assertMongoName(kind: 'collection' | 'log' | 'field', name: string): string {
  if (typeof name !== 'string' || name.length > MAX_IDENTIFIER_LENGTH || !IDENTIFIER.test(name)) {
    throw new TypeError(
      `mongodb store: invalid ${kind} name ${JSON.stringify(name)} ` +
        `(expected letters, digits and '_', not starting with a digit, at most ${MAX_IDENTIFIER_LENGTH} chars)`,
    );
  }
  return name;
}

/** The path under which filters, sorts and indexes find a top-level field. */
export function fieldPath(field: string): string {
  return `f.${assertMongoName('field', field)}`;
}

/**
 * The `f` projection of a JSON object: every top-level field with a queryable name (others can
 * never be named in a query) and a non-null value. Null is left out because MongoDB's
 * `{ f.x: null }` matches a missing field anyway, and because a partial unique index then never
 * sees it: like SQLite's NULLs, absent and null values never collide. An object or array is
 * projected as its JSON text, which is what the embedded adapter's `json_extract` compares.
 */
export function queryableFields(json: Record<string, unknown>): Document {
  const fields: Document = {};
  for (const [name, value] of Object.entries(json)) {
    if (value === null || value === undefined || name === '__proto__') continue;
    if (name.length > MAX_IDENTIFIER_LENGTH || !IDENTIFIER.test(name)) continue;
    fields[name] = typeof value === 'object' ? JSON.stringify(value) : value;
  }
  return fields;
}

/**
 * The port's equality filter on the `f` projection. MongoDB's `{ 'f.x': null }` matches a
 * missing field, which is how `queryableFields` stores both missing and null: exactly the
 * port's rule. Booleans only equal booleans and numbers compare numerically across int/double,
 * as in the embedded adapter. `undefined` values are ignored, like an absent key.
 */
export function whereFilter(where: object | undefined): Document {
  const filter: Document = {};
  for (const [field, value] of Object.entries(where ?? {})) {
    if (value === undefined) continue;
    if (
      value !== null &&
      typeof value !== 'string' &&
      typeof value !== 'number' &&
      typeof value !== 'boolean'
    ) {
      throw new TypeError(`mongodb store: where.${field} must be a string, number, boolean or null`);
    }
    filter[fieldPath(field)] = value;
  }
  return filter;
}

/**
 * Visible = no expiry, or an expiry not before `now` (the injected clock, as the embedded
 * adapter's `expires_at >= now`). `$not` also matches documents without `_expires`.
 * MongoDB's TTL monitor only purges about once a minute, so every read carries this filter.
 */
export function visibleFilter(now: Date): Document {
  return { _expires: { $not: { $lt: now } } };
}

/** Documents that are past their expiry at `now`: the ones a write purges first. */
export function expiredFilter(now: Date): Document {
  return { _expires: { $lt: now } };
}

/** Sort by the field, then by id so pages are stable; by id alone when no order is asked for. */
export function collectionSort(orderBy: { field: string; direction?: 'asc' | 'desc' } | undefined): Document {
  if (orderBy === undefined) return { _id: 1 };
  const direction = orderBy.direction === 'desc' ? -1 : 1;
  return { [fieldPath(orderBy.field)]: direction, _id: direction };
}

/**
 * Validated paging. MongoDB reads `limit(0)` as "no limit", whereas the port (and SQL) mean no
 * rows, so a zero limit is reported as `empty` and the caller skips the query.
 */
export function pageBounds(
  limit: number | undefined,
  offset: number | undefined,
): { empty: boolean; limit?: number; skip?: number } {
  if (limit !== undefined) checkCount('limit', limit);
  if (offset !== undefined) checkCount('offset', offset);
  return {
    empty: limit === 0,
    ...(limit === undefined ? {} : { limit }),
    ...(offset === undefined || offset === 0 ? {} : { skip: offset }),
  };
}

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`mongodb store: ${name} must be a non-negative integer, got ${String(value)}`);
  }
}

/**
 * The JSON text stored as `body` and the parsed copy returned to the caller, so a `Date` comes
 * back as its ISO text and `undefined` fields vanish, exactly as in the embedded adapter.
 */
export function encodeJson<T>(value: T, what: string): { body: string; json: T } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${what} must be a JSON object`);
  }
  const body = JSON.stringify(value);
  return { body, json: JSON.parse(body) as T };
}

/**
 * The `_expires` shadow of a document's ttl field: a BSON Date, the only type MongoDB's TTL
 * index acts on. Absent or null means the document never expires.
 */
export function expiryOf(
  doc: Record<string, unknown>,
  ttlField: string | undefined,
  collection: string,
): Date | undefined {
  if (ttlField === undefined) return undefined;
  const raw = doc[ttlField];
  if (raw === undefined || raw === null) return undefined;
  const ms = typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new TypeError(
      `${collection}: ttl field '${ttlField}' must be an ISO timestamp, got ${JSON.stringify(raw)}`,
    );
  }
  return new Date(ms);
}
