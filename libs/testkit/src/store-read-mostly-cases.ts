import { describe, expect, it } from 'vitest';
import type { Collection, Doc } from '@agent-platform/store';
import type { StoreHarness } from './store-harness.ts';

interface Item extends Doc {
  name: string;
  kind?: string;
}

/**
 * `readMostly` collections (CollectionOptions): an adapter may answer them from memory, but an
 * answer is never older than the last write, whichever handle of the collection made it.
 */
export function readMostlyCases(h: () => StoreHarness): void {
  describe('read-mostly collection', () => {
    const cached = (): Collection<Item> => h().store.collection<Item>('items', { readMostly: true, indexes: [{ field: 'kind' }] });
    const plain = (): Collection<Item> => h().store.collection<Item>('items', { indexes: [{ field: 'kind' }] });
    const names = async (): Promise<string[]> => (await cached().find({ where: { kind: 'k' } })).map((v) => v.doc.name);

    it('answers what the database holds after every kind of write, made through another handle', async () => {
      await plain().insert({ id: 'a', name: 'v1', kind: 'k' });
      expect(await cached().get('a')).toEqual({ doc: { id: 'a', name: 'v1', kind: 'k' }, version: 1 });
      expect(await names()).toEqual(['v1']);

      await plain().replace({ id: 'a', name: 'v2', kind: 'k' }, 1);
      expect(await cached().get('a')).toEqual({ doc: { id: 'a', name: 'v2', kind: 'k' }, version: 2 });
      expect(await names()).toEqual(['v2']);

      await plain().upsert({ id: 'a', name: 'v3', kind: 'k' });
      await plain().insert({ id: 'b', name: 'b1', kind: 'k' });
      expect((await cached().get('a'))?.version).toBe(3);
      expect(await names()).toEqual(['v3', 'b1']);

      await plain().update('a', (current) => ({ ...current!.doc, name: 'v4' }));
      expect((await cached().get('a'))?.doc.name).toBe('v4');
      expect(await names()).toEqual(['v4', 'b1']);

      await plain().delete('a');
      expect(await cached().get('a')).toBeNull();
      expect(await names()).toEqual(['b1']);
    });

    it('answers its own writes, and a write that failed changes no answer', async () => {
      await cached().insert({ id: 'a', name: 'v1', kind: 'k' });
      expect(await names()).toEqual(['v1']);
      await expect(
        cached().update('a', () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      await expect(cached().replace({ id: 'a', name: 'stale', kind: 'k' }, 7)).rejects.toThrow();
      expect(await cached().get('a')).toEqual({ doc: { id: 'a', name: 'v1', kind: 'k' }, version: 1 });
      expect(await names()).toEqual(['v1']);
      await cached().replace({ id: 'a', name: 'v2', kind: 'other' }, 1);
      expect(await names()).toEqual([]);
      expect((await cached().find()).map((v) => v.doc.name)).toEqual(['v2']);
    });

    it('answers every kind of write another process made, as soon as that write was acknowledged', async (ctx) => {
      const another = h().another;
      if (another === undefined) return ctx.skip();
      const other = (await another()).collection<Item>('items', { indexes: [{ field: 'kind' }] });
      expect(await cached().get('a')).toBeNull();
      expect(await names()).toEqual([]);

      await other.insert({ id: 'a', name: 'v1', kind: 'k' });
      expect(await cached().get('a')).toEqual({ doc: { id: 'a', name: 'v1', kind: 'k' }, version: 1 });
      expect(await names()).toEqual(['v1']);
      await other.replace({ id: 'a', name: 'v2', kind: 'k' }, 1);
      expect((await cached().get('a'))?.doc.name).toBe('v2');
      expect(await names()).toEqual(['v2']);
      await other.upsert({ id: 'a', name: 'v3', kind: 'k' });
      expect((await cached().get('a'))?.version).toBe(3);
      await other.update('a', (current) => ({ ...current!.doc, name: 'v4' }));
      expect(await names()).toEqual(['v4']);
      await other.delete('a');
      expect(await cached().get('a')).toBeNull();
      expect(await names()).toEqual([]);
    });

    it('never answers older than a write another process acknowledged before the read was asked, under a stream of reads', async (ctx) => {
      const another = h().another;
      if (another === undefined) return ctx.skip();
      const other = (await another()).collection<Item>('items', { indexes: [{ field: 'kind' }] });
      await other.insert({ id: 'a', name: '0', kind: 'k' });
      // Readers keep reads (and so the adapter's shared looks, if it has any) under way the
      // whole time, so a read asked after a write was acknowledged may find one already sent.
      let writing = true;
      const readers = Array.from({ length: 4 }, async () => {
        while (writing) {
          await cached().get('a');
          // A read answered from memory settles without I/O: give the writer its turn.
          await new Promise((resolve) => setImmediate(resolve));
        }
      });
      try {
        for (let n = 1; n <= 40; n++) {
          await other.replace({ id: 'a', name: String(n), kind: 'k' }, n);
          const [byId, byQuery] = await Promise.all([cached().get('a'), names()]);
          expect(byId?.doc.name).toBe(String(n));
          expect(byQuery).toEqual([String(n)]);
        }
      } finally {
        writing = false;
        await Promise.all(readers);
      }
    });

    it('finds documents written after a query found none', async () => {
      expect(await cached().get('late')).toBeNull();
      expect(await names()).toEqual([]);
      await plain().insert({ id: 'late', name: 'late', kind: 'k' });
      expect((await cached().get('late'))?.doc.name).toBe('late');
      expect(await names()).toEqual(['late']);
    });
  });
}
