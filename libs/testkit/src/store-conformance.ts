import { describe, expect, it } from 'vitest';
import type { Doc } from '@agent-platform/store';
import { counterCases } from './store-counter-cases.ts';
import { collectionCases } from './store-collection-cases.ts';
import { readMostlyCases } from './store-read-mostly-cases.ts';
import type { StoreFactory, StoreHarness } from './store-harness.ts';
import { useStoreHarness } from './store-harness.ts';
import { chainLink, logCases } from './store-log-cases.ts';
import type { ChainEntry } from './store-log-cases.ts';

export type { StoreConformanceContext, StoreFactory, StoreUnderTest } from './store-harness.ts';

/**
 * The store port's conformance suite (the guarantees listed on `Store`). Every adapter runs it:
 *
 * ```ts
 * storeConformance('embedded', async ({ now }) => {
 *   const dir = await mkdtemp(join(tmpdir(), 'store-'));
 *   const path = join(dir, 'platform.db');
 *   return {
 *     store: await openEmbeddedStore({ path, clock: now }),
 *     reopen: () => openEmbeddedStore({ path, clock: now }),
 *     cleanup: () => rm(dir, { recursive: true, force: true }),
 *   };
 * });
 * ```
 *
 * Each test gets a fresh, empty store from `factory`. Stores are closed by the suite.
 */
export function storeConformance(name: string, factory: StoreFactory): void {
  describe(`store conformance: ${name}`, () => {
    const h = useStoreHarness(factory);
    collectionCases(h);
    readMostlyCases(h);
    logCases(h);
    counterCases(h);
    lifecycleCases(h);
  });
}

function lifecycleCases(h: () => StoreHarness): void {
  describe('lifecycle', () => {
    it('reports healthy while open; after close it reports down and operations reject', async () => {
      const { store } = h();
      expect((await store.health()).status).toBe('ok');
      const items = store.collection<Doc>('items');
      await h().close();
      expect((await store.health()).status).toBe('down');
      await expect(items.get('a')).rejects.toThrow();
      await expect(store.counters.get('x')).rejects.toThrow();
    });

    it('keeps documents, log entries and counters across a restart', async (ctx) => {
      const reopen = h().reopen;
      if (reopen === undefined) return ctx.skip('adapter cannot reopen its data');
      const before = h().store;
      await before.collection<Doc & { name: string }>('items').insert({ id: 'a', name: 'kept' });
      await before.collection<Doc & { name: string }>('items').replace({ id: 'a', name: 'kept v2' }, 1);
      for (let i = 1; i <= 3; i++) await before.log<ChainEntry>('chain').append(chainLink('w', i));
      for (let i = 1; i <= 3; i++) await before.log<ChainEntry>('trimmed').append(chainLink('t', i));
      await before.log<ChainEntry>('trimmed').dropBefore(3);
      await before.counters.add('spent', 42);

      const after = await reopen();
      expect(await after.collection('items').get('a')).toEqual({
        doc: { id: 'a', name: 'kept v2' },
        version: 2,
      });
      expect((await after.log<ChainEntry>('chain').tip())?.seq).toBe(3);
      expect((await after.log<ChainEntry>('chain').append(chainLink('w', 4))).prev).toBe('w#3@3');
      expect(await after.counters.get('spent')).toBe(42);
      // Dropped entries stay gone and numbering continues after the kept tip.
      expect((await after.log<ChainEntry>('trimmed').scan(1, 10)).map((e) => e.seq)).toEqual([3]);
      expect((await after.log<ChainEntry>('trimmed').append(chainLink('t', 4))).seq).toBe(4);
    });
  });
}
