import { describe, expect, it } from 'vitest';
import { StoreConflictError, StoreDuplicateError } from '@agent-platform/store';
import type { Collection, Doc } from '@agent-platform/store';
import type { StoreHarness } from './store-harness.ts';

interface Item extends Doc {
  name: string;
  kind?: string;
  rank?: number;
  active?: boolean;
  owner?: string | null;
  email?: string;
  expires_at?: string;
}

/** Collection guarantees of the store port: versions, optimistic concurrency, indexes, queries, TTL. */
export function collectionCases(h: () => StoreHarness): void {
  const items = (): Collection<Item> => h().store.collection<Item>('items');

  describe('collection', () => {
    it('returns null for an unknown id and round-trips an inserted document at version 1', async () => {
      expect(await items().get('nope')).toBeNull();
      const doc: Item = { id: 'a', name: 'Alpha', rank: 1, active: true, owner: null };
      expect(await items().insert(doc)).toEqual({ doc, version: 1 });
      expect(await items().get('a')).toEqual({ doc, version: 1 });
    });

    it('grows the version by one on every write', async () => {
      await items().insert({ id: 'a', name: 'v1' });
      expect((await items().replace({ id: 'a', name: 'v2' }, 1)).version).toBe(2);
      expect((await items().upsert({ id: 'a', name: 'v3' })).version).toBe(3);
      expect(await items().get('a')).toEqual({ doc: { id: 'a', name: 'v3' }, version: 3 });
      expect((await items().upsert({ id: 'b', name: 'new' })).version).toBe(1);
    });

    it('rejects inserting an existing id with StoreDuplicateError and keeps the stored document', async () => {
      await items().insert({ id: 'a', name: 'first' });
      await expect(items().insert({ id: 'a', name: 'second' })).rejects.toBeInstanceOf(StoreDuplicateError);
      expect(await items().get('a')).toEqual({ doc: { id: 'a', name: 'first' }, version: 1 });
    });

    it('rejects a replace with a stale version or of a missing document with StoreConflictError', async () => {
      await items().insert({ id: 'a', name: 'v1' });
      await items().replace({ id: 'a', name: 'v2' }, 1);
      await expect(items().replace({ id: 'a', name: 'stale' }, 1)).rejects.toBeInstanceOf(StoreConflictError);
      await expect(items().replace({ id: 'ghost', name: 'x' }, 1)).rejects.toBeInstanceOf(StoreConflictError);
      expect(await items().get('a')).toEqual({ doc: { id: 'a', name: 'v2' }, version: 2 });
      expect(await items().get('ghost')).toBeNull();
    });

    it('lets exactly one of several replaces from the same version win', async () => {
      await items().insert({ id: 'a', name: 'v1' });
      // Separate handles, as two request handlers (or nodes) would hold.
      const handles = [
        items(),
        h().store.collection<Item>('items'),
        items(),
        h().store.collection<Item>('items'),
      ];
      const results = await Promise.allSettled(
        handles.map((c, i) => c.replace({ id: 'a', name: `writer-${i}` }, 1)),
      );
      const winners = results.filter((r) => r.status === 'fulfilled');
      const losers = results.filter((r) => r.status === 'rejected');
      expect(winners).toHaveLength(1);
      for (const loser of losers) expect(loser.reason).toBeInstanceOf(StoreConflictError);
      const stored = await items().get('a');
      expect(stored?.version).toBe(2);
      expect(stored?.doc).toEqual(winners[0]!.value.doc);
    });

    it('deletes with and without an expected version', async () => {
      await items().insert({ id: 'a', name: 'A' });
      await items().insert({ id: 'b', name: 'B' });
      await expect(items().delete('a', 7)).rejects.toBeInstanceOf(StoreConflictError);
      expect(await items().get('a')).not.toBeNull();
      expect(await items().delete('a', 1)).toBe(true);
      expect(await items().delete('b')).toBe(true);
      expect(await items().delete('b')).toBe(false);
      expect(await items().delete('b', 1)).toBe(false);
      expect(await items().get('a')).toBeNull();
      expect((await items().insert({ id: 'a', name: 'again' })).version).toBe(1);
    });

    it('enforces unique indexes on insert and upsert, and frees the value on delete', async () => {
      const users = h().store.collection<Item>('users', {
        indexes: [{ field: 'email', unique: true }, { field: 'kind' }],
      });
      await users.insert({ id: 'u1', name: 'Ann', email: 'ann@example.com', kind: 'x' });
      await users.insert({ id: 'u2', name: 'Bob', email: 'bob@example.com', kind: 'x' });
      await expect(users.insert({ id: 'u3', name: 'Ann2', email: 'ann@example.com' })).rejects.toBeInstanceOf(
        StoreDuplicateError,
      );
      await expect(users.upsert({ id: 'u3', name: 'Ann3', email: 'ann@example.com' })).rejects.toBeInstanceOf(
        StoreDuplicateError,
      );
      await expect(users.replace({ id: 'u2', name: 'Bob', email: 'ann@example.com' }, 1)).rejects.toThrow();
      expect(await users.get('u2')).toEqual({
        doc: { id: 'u2', name: 'Bob', email: 'bob@example.com', kind: 'x' },
        version: 1,
      });
      expect(await users.get('u3')).toBeNull();
      expect(
        (await users.upsert({ id: 'u1', name: 'Ann renamed', email: 'ann@example.com', kind: 'x' })).version,
      ).toBe(2);
      await users.delete('u1');
      expect((await users.insert({ id: 'u3', name: 'Ann3', email: 'ann@example.com' })).version).toBe(1);
    });

    it('keeps collections apart and reopening a collection is idempotent', async () => {
      await h().store.collection<Item>('left').insert({ id: 'same', name: 'left' });
      await h().store.collection<Item>('right').insert({ id: 'same', name: 'right' });
      const again = h().store.collection<Item>('left', { indexes: [{ field: 'name' }] });
      expect((await again.get('same'))?.doc.name).toBe('left');
      expect((await h().store.collection<Item>('right').get('same'))?.doc.name).toBe('right');
    });

    findCases(items);
    updateCases(h, items);
    ttlCases(h);
  });
}

function findCases(items: () => Collection<Item>): void {
  const seed: Item[] = [
    { id: 'd1', name: 'n1', kind: 'a', rank: 3, active: true, owner: 'ann' },
    { id: 'd2', name: 'n2', kind: 'b', rank: 1, active: false, owner: null },
    { id: 'd3', name: 'n3', kind: 'a', rank: 5, active: false },
    { id: 'd4', name: 'n4', kind: 'a', rank: 2, active: true, owner: 'bob' },
    { id: 'd5', name: 'n5', kind: 'b', rank: 4, active: true },
  ];
  const ids = (rows: { doc: Item }[]) => rows.map((r) => r.doc.id);
  const seeded = async () => {
    const c = items();
    for (const doc of seed) await c.insert(doc);
    return c;
  };

  it('finds by equality on strings, numbers and booleans, and null matches missing or null', async () => {
    const c = await seeded();
    expect(ids(await c.find({ where: { kind: 'a' } })).sort()).toEqual(['d1', 'd3', 'd4']);
    expect(ids(await c.find({ where: { rank: 4 } }))).toEqual(['d5']);
    expect(ids(await c.find({ where: { active: false } })).sort()).toEqual(['d2', 'd3']);
    expect(ids(await c.find({ where: { owner: null } })).sort()).toEqual(['d2', 'd3', 'd5']);
    expect(ids(await c.find({ where: { kind: 'a', active: true } })).sort()).toEqual(['d1', 'd4']);
    expect(await c.find({ where: { kind: 'zzz' } })).toEqual([]);
    expect((await c.find()).map((r) => r.version)).toEqual([1, 1, 1, 1, 1]);
  });

  it('orders, limits and offsets', async () => {
    const c = await seeded();
    expect(ids(await c.find({ orderBy: { field: 'rank' } }))).toEqual(['d2', 'd4', 'd1', 'd5', 'd3']);
    expect(ids(await c.find({ orderBy: { field: 'rank', direction: 'desc' }, limit: 2 }))).toEqual([
      'd3',
      'd5',
    ]);
    expect(ids(await c.find({ orderBy: { field: 'rank' }, limit: 2, offset: 2 }))).toEqual(['d1', 'd5']);
    expect(ids(await c.find({ orderBy: { field: 'rank' }, offset: 4 }))).toEqual(['d3']);
    expect(
      ids(await c.find({ where: { kind: 'a' }, orderBy: { field: 'rank', direction: 'desc' }, limit: 1 })),
    ).toEqual(['d3']);
  });

  it('counts all documents or those matching a filter', async () => {
    const c = await seeded();
    expect(await c.count()).toBe(5);
    expect(await c.count({ kind: 'b' })).toBe(2);
    expect(await c.count({ owner: null, active: true })).toBe(1);
    await c.delete('d5');
    expect(await c.count({ kind: 'b' })).toBe(1);
  });
}

function updateCases(h: () => StoreHarness, items: () => Collection<Item>): void {
  it('update creates, changes or leaves a document as its change function says', async () => {
    const created = await items().update('a', (current) =>
      current === null ? { id: 'a', name: 'new', rank: 1 } : null,
    );
    expect(created).toEqual({ doc: { id: 'a', name: 'new', rank: 1 }, version: 1 });
    const changed = await items().update(
      'a',
      (current) => current && { ...current.doc, rank: (current.doc.rank ?? 0) + 1 },
    );
    expect(changed).toEqual({ doc: { id: 'a', name: 'new', rank: 2 }, version: 2 });
    expect(await items().update('a', () => null)).toEqual(changed);
    expect(await items().update('ghost', () => null)).toBeNull();
    expect(await items().get('ghost')).toBeNull();
    expect(await items().get('a')).toEqual(changed);
  });

  it('update loses no change when 40 run at once from separate handles', async () => {
    await items().insert({ id: 'n', name: 'counter', rank: 0 });
    const bump = (c: Collection<Item>) =>
      c.update('n', (current) => current && { ...current.doc, rank: (current.doc.rank ?? 0) + 1 });
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => bump(i % 2 === 0 ? items() : h().store.collection<Item>('items'))),
    );
    expect(await items().get('n')).toEqual({ doc: { id: 'n', name: 'counter', rank: 40 }, version: 41 });
  });

  it('update writes nothing when its change throws or would change the id', async () => {
    await items().insert({ id: 'a', name: 'kept' });
    const refused = new Error('refused');
    await expect(
      items().update('a', () => {
        throw refused;
      }),
    ).rejects.toBe(refused);
    await expect(
      items().update('a', (current) => current && { ...current.doc, id: 'b' }),
    ).rejects.toBeInstanceOf(TypeError);
    expect(await items().get('a')).toEqual({ doc: { id: 'a', name: 'kept' }, version: 1 });
    expect(await items().get('b')).toBeNull();
  });

  it('update sees an expired document as absent and reports a unique clash on create', async () => {
    const coll = h().store.collection<Item>('leases', {
      ttlField: 'expires_at',
      indexes: [{ field: 'email', unique: true }],
    });
    const at = (ms: number) => new Date(h().now().getTime() + ms).toISOString();
    await coll.insert({ id: 'old', name: 'expiring', expires_at: at(1_000) });
    await coll.insert({ id: 'other', name: 'holder', email: 'taken@example.com' });
    h().advance(5_000);
    const seen: (string | null)[] = [];
    const fresh = await coll.update('old', (current) => {
      seen.push(current?.doc.name ?? null);
      return { id: 'old', name: 'fresh' };
    });
    expect(seen.every((name) => name === null)).toBe(true);
    expect(fresh).toEqual({ doc: { id: 'old', name: 'fresh' }, version: 1 });
    await expect(
      coll.update('third', () => ({ id: 'third', name: 'x', email: 'taken@example.com' })),
    ).rejects.toBeInstanceOf(StoreDuplicateError);
    expect(await coll.get('third')).toBeNull();
  });
}

function ttlCases(h: () => StoreHarness): void {
  it('hides documents whose ttl has passed and lets their id be reused', async () => {
    const sessions = h().store.collection<Item>('sessions', {
      ttlField: 'expires_at',
      indexes: [{ field: 'kind' }],
    });
    const at = (ms: number) => new Date(h().now().getTime() + ms).toISOString();
    await sessions.insert({ id: 'short', name: 's', kind: 'k', expires_at: at(60_000) });
    await sessions.insert({ id: 'long', name: 'l', kind: 'k', expires_at: at(3_600_000) });
    await sessions.insert({ id: 'forever', name: 'f', kind: 'k' });
    expect(await sessions.count({ kind: 'k' })).toBe(3);

    h().advance(120_000);
    expect(await sessions.get('short')).toBeNull();
    expect((await sessions.find({ where: { kind: 'k' } })).map((r) => r.doc.id).sort()).toEqual([
      'forever',
      'long',
    ]);
    expect(await sessions.count()).toBe(2);
    await expect(sessions.replace({ id: 'short', name: 'revived' }, 1)).rejects.toBeInstanceOf(
      StoreConflictError,
    );
    expect(
      (await sessions.insert({ id: 'short', name: 'fresh', kind: 'k', expires_at: at(60_000) })).version,
    ).toBe(1);
    expect((await sessions.get('short'))?.doc.name).toBe('fresh');

    h().advance(7_200_000);
    expect((await sessions.find()).map((r) => r.doc.id)).toEqual(['forever']);
  });

  it('lets an insert or an upsert take an expired document\'s id, starting again at version 1; a live one stays a duplicate', async () => {
    const leases = h().store.collection<Item>('ttl_takeover', { ttlField: 'expires_at', indexes: [{ field: 'kind' }] });
    const at = (ms: number) => new Date(h().now().getTime() + ms).toISOString();
    await leases.insert({ id: 'a', name: 'first', kind: 'k', expires_at: at(60_000) });
    await leases.upsert({ id: 'b', name: 'first', kind: 'k', expires_at: at(60_000) });
    expect((await leases.upsert({ id: 'b', name: 'second', kind: 'k', expires_at: at(60_000) })).version).toBe(2);
    await expect(leases.insert({ id: 'a', name: 'again', kind: 'k' })).rejects.toBeInstanceOf(StoreDuplicateError);
    expect(await leases.get('a')).toEqual({ doc: { id: 'a', name: 'first', kind: 'k', expires_at: at(60_000) }, version: 1 });

    h().advance(120_000);
    expect(await leases.insert({ id: 'a', name: 'new', kind: 'k' })).toEqual({ doc: { id: 'a', name: 'new', kind: 'k' }, version: 1 });
    expect((await leases.upsert({ id: 'b', name: 'new', kind: 'k' })).version).toBe(1);
    expect((await leases.find({ where: { kind: 'k' } })).map((v) => [v.doc.id, v.doc.name, v.version])).toEqual([
      ['a', 'new', 1],
      ['b', 'new', 1],
    ]);
    // Taken over, they no longer expire: a later insert of the id is a duplicate again.
    h().advance(7_200_000);
    await expect(leases.insert({ id: 'a', name: 'late', kind: 'k' })).rejects.toBeInstanceOf(StoreDuplicateError);
  });

  it('lets a replace or an insert take a unique value an expired document held', async () => {
    const accounts = h().store.collection<Item>('accounts', {
      ttlField: 'expires_at',
      indexes: [{ field: 'email', unique: true }],
    });
    const at = (ms: number) => new Date(h().now().getTime() + ms).toISOString();
    await accounts.insert({ id: 'old', name: 'o', email: 'a@x', expires_at: at(60_000) });
    await accounts.insert({ id: 'other', name: 'b', email: 'b@x' });
    await expect(accounts.replace({ id: 'other', name: 'b', email: 'a@x' }, 1)).rejects.toBeInstanceOf(StoreDuplicateError);

    h().advance(120_000);
    expect((await accounts.replace({ id: 'other', name: 'b', email: 'a@x' }, 1)).version).toBe(2);
    await accounts.replace({ id: 'other', name: 'b', email: 'b@x' }, 2);
    await accounts.insert({ id: 'late', name: 'l', email: 'c@x', expires_at: at(60_000) });
    h().advance(120_000);
    expect((await accounts.insert({ id: 'new', name: 'n', email: 'c@x' })).version).toBe(1);
  });
}
