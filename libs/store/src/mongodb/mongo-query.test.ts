import { describe, expect, it } from 'vitest';
import {
  assertMongoName,
  collectionSort,
  expiredFilter,
  expiryOf,
  fieldPath,
  pageBounds,
  encodeJson,
  queryableFields,
  visibleFilter,
  whereFilter,
} from './mongo-query.ts';

describe('mongodb query translation', () => {
  it('accepts the same plain identifiers as the embedded adapter and refuses paths and operators', () => {
    expect(assertMongoName('collection', 'api_keys')).toBe('api_keys');
    for (const bad of ['a.b', '$where', 'audit-log', '1st', '', 'x'.repeat(64)]) {
      expect(() => assertMongoName('field', bad)).toThrow(/invalid field name/);
    }
    expect(fieldPath('email')).toBe('f.email');
    expect(() => fieldPath('a.b')).toThrow(/invalid field name/);
  });

  it('turns equality filters into paths on the projection, null kept for missing-or-null', () => {
    expect(whereFilter({ kind: 'a', rank: 4, active: false, owner: null, gone: undefined })).toEqual({
      'f.kind': 'a',
      'f.rank': 4,
      'f.active': false,
      'f.owner': null,
    });
    expect(whereFilter(undefined)).toEqual({});
    expect(() => whereFilter({ tags: ['a'] })).toThrow(/where.tags must be/);
    expect(() => whereFilter({ nested: { $ne: 1 } })).toThrow(/where.nested must be/);
    expect(() => whereFilter({ 'a.b': 1 })).toThrow(/invalid field name/);
  });

  it('projects queryable top-level fields: no nulls, no unqueryable names, nested values as JSON text', () => {
    const { json } = encodeJson(
      {
        id: 'd1',
        kind: 'a',
        rank: 3,
        active: false,
        owner: null,
        tags: ['x', 'y'],
        manifest: { $schema: 'https://json-schema.org/draft/2020-12/schema', 'a.b': 1 },
        'dotted.key': 'skipped',
        $op: 'skipped',
      },
      'doc',
    );
    expect(queryableFields(json)).toEqual({
      id: 'd1',
      kind: 'a',
      rank: 3,
      active: false,
      tags: '["x","y"]',
      manifest: '{"$schema":"https://json-schema.org/draft/2020-12/schema","a.b":1}',
    });
    const hostile = JSON.parse('{"__proto__": "x", "ok": 1}') as Record<string, unknown>;
    const projected = queryableFields(hostile);
    expect(projected).toEqual({ ok: 1 });
    expect(Object.getPrototypeOf(projected)).toBe(Object.prototype);
  });

  it('builds the TTL visibility and purge filters from the given clock', () => {
    const now = new Date('2030-01-01T00:00:00.000Z');
    expect(visibleFilter(now)).toEqual({ _expires: { $not: { $lt: now } } });
    expect(expiredFilter(now)).toEqual({ _expires: { $lt: now } });
  });

  it('sorts by the field then id, or by id alone', () => {
    expect(collectionSort(undefined)).toEqual({ _id: 1 });
    expect(Object.entries(collectionSort({ field: 'rank' }))).toEqual([
      ['f.rank', 1],
      ['_id', 1],
    ]);
    expect(collectionSort({ field: 'rank', direction: 'desc' })).toEqual({ 'f.rank': -1, _id: -1 });
  });

  it('treats limit 0 as no rows (MongoDB would read it as no limit) and refuses bad counts', () => {
    expect(pageBounds(0, undefined)).toEqual({ empty: true, limit: 0 });
    expect(pageBounds(2, 3)).toEqual({ empty: false, limit: 2, skip: 3 });
    expect(pageBounds(undefined, 0)).toEqual({ empty: false });
    expect(() => pageBounds(-1, undefined)).toThrow(RangeError);
    expect(() => pageBounds(undefined, 1.5)).toThrow(RangeError);
  });

  it('stores JSON text: undefined fields vanish, dates become ISO text, non-objects are refused', () => {
    const at = new Date('2030-01-02T03:04:05.000Z');
    const { body, json } = encodeJson({ id: 'a', gone: undefined, at, n: [1, undefined] }, 'doc');
    expect(body).toBe('{"id":"a","at":"2030-01-02T03:04:05.000Z","n":[1,null]}');
    expect(json).toEqual({ id: 'a', at: '2030-01-02T03:04:05.000Z', n: [1, null] });
    expect(() => encodeJson([1], 'append: the built entry')).toThrow(
      'append: the built entry must be a JSON object',
    );
  });

  it('shadows the ttl field as a Date, and refuses a ttl that is not a timestamp', () => {
    expect(expiryOf({ expires_at: '2030-01-01T00:00:00Z' }, 'expires_at', 'sessions')).toEqual(
      new Date('2030-01-01T00:00:00.000Z'),
    );
    expect(expiryOf({ expires_at: null }, 'expires_at', 'sessions')).toBeUndefined();
    expect(expiryOf({}, 'expires_at', 'sessions')).toBeUndefined();
    expect(expiryOf({ expires_at: 'soon' }, undefined, 'sessions')).toBeUndefined();
    expect(() => expiryOf({ expires_at: 'soon' }, 'expires_at', 'sessions')).toThrow(
      `sessions: ttl field 'expires_at' must be an ISO timestamp, got "soon"`,
    );
    expect(() => expiryOf({ expires_at: 1 }, 'expires_at', 'sessions')).toThrow(/ISO timestamp/);
  });
});
