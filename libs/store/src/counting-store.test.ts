import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreOperationCounter } from './counting-store.ts';
import { openEmbeddedStore } from './embedded/index.ts';
import type { Store } from './store.ts';

let dir: string;
let inner: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-counting-'));
  inner = await openEmbeddedStore({ path: join(dir, 'db.sqlite') });
});
afterEach(async () => {
  await inner.close();
  await rm(dir, { recursive: true, force: true });
});

describe('StoreOperationCounter', () => {
  it('counts the reads and writes made inside measure, by name, and none made outside it', async () => {
    const counter = new StoreOperationCounter();
    const store = counter.wrap(inner);
    const items = store.collection<{ id: string; n: number }>('items');
    await items.insert({ id: 'a', n: 1 });
    const { result, tally } = await counter.measure(async () => {
      await items.update('a', (current) => ({ id: 'a', n: (current?.doc.n ?? 0) + 1 }));
      await store.log<{ at: string }>('trail').append(() => ({ at: 'now' }));
      await store.counters.add('k', 1);
      return (await items.get('a'))?.doc.n;
    });
    expect(result).toBe(2);
    expect(tally.operations.map((op) => `${op.kind} ${op.name}`)).toEqual(['write items.update', 'write log:trail.append', 'write counters.add', 'read items.get']);
    expect([tally.reads, tally.writes]).toEqual([1, 3]);
  });

  it('attributes concurrent work to the measure that started it, skips what runs ignored, and windows see every context', async () => {
    const counter = new StoreOperationCounter();
    const store = counter.wrap(inner);
    const items = store.collection<{ id: string }>('items');
    const [first, second] = await Promise.all([
      counter.measure(() => items.get('x')),
      counter.measure(async () => {
        await items.find();
        await counter.ignoring(() => items.count());
      }),
    ]);
    expect(first.tally.operations.map((op) => op.name)).toEqual(['items.get']);
    expect(second.tally.operations.map((op) => op.name)).toEqual(['items.find']);
    const background = setTimeout(() => void items.count(), 0);
    const { tally } = await counter.window(async () => {
      await new Promise((r) => setTimeout(r, 20));
      await counter.ignoring(() => items.get('y'));
    });
    clearTimeout(background);
    expect(tally.operations.map((op) => op.name)).toEqual(['items.count']);
  });
});
