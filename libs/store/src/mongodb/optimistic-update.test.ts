import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../embedded/index.ts';
import type { Collection, Doc, Store } from '../store.ts';
import { StoreConflictError } from '../store.ts';
import { MAX_UPDATE_ATTEMPTS, optimisticUpdate } from './optimistic-update.ts';

interface Item extends Doc {
  n: number;
}

/**
 * The loop runs here over the embedded collection's get / insert / replace (not its `update`):
 * the same single-document operations with a version check that the MongoDB adapter uses, and
 * writes that land a turn of the event loop after their read, so concurrent calls really race.
 */
describe('optimistic update (the MongoDB adapter’s Collection.update)', () => {
  let dir: string;
  let store: Store;
  let items: Collection<Item>;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'optimistic-update-'));
    store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    items = store.collection<Item>('items');
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const bump = () =>
    optimisticUpdate(items, 'items', 'x', (current) => ({ id: 'x', n: (current?.doc.n ?? 0) + 1 }));

  it('applies 30 racing updates exactly once each, the first of them creating the document', async () => {
    await Promise.all(Array.from({ length: 30 }, bump));
    expect(await items.get('x')).toEqual({ doc: { id: 'x', n: 30 }, version: 30 });
  });

  it('gives up with StoreConflictError when every attempt loses', async () => {
    await items.insert({ id: 'x', n: 0 });
    let calls = 0;
    const losing = optimisticUpdate(items, 'items', 'x', (current) => {
      calls++;
      // Another writer lands between this read and its write, every time.
      void items.replace({ id: 'x', n: -1 }, current!.version);
      return { id: 'x', n: 1 };
    });
    await expect(losing).rejects.toBeInstanceOf(StoreConflictError);
    expect(calls).toBe(MAX_UPDATE_ATTEMPTS);
  });
});
