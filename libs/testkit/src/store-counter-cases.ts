import { describe, expect, it } from 'vitest';
import type { StoreHarness } from './store-harness.ts';

/** Counters guarantees: exact under concurrency, a limit that is never exceeded, batched adds. */
export function counterCases(h: () => StoreHarness): void {
  describe('counters', () => {
    it('starts at 0 and adds positive and negative deltas', async () => {
      const { counters } = h().store;
      expect(await counters.get('budget:t1')).toBe(0);
      expect(await counters.add('budget:t1', 5)).toEqual({ value: 5, applied: true });
      expect(await counters.add('budget:t1', -2)).toEqual({ value: 3, applied: true });
      expect(await counters.get('budget:t1')).toBe(3);
    });

    it('is exact under 100 concurrent adds', async () => {
      const { counters } = h().store;
      await Promise.all(Array.from({ length: 100 }, () => counters.add('hits', 1)));
      expect(await counters.get('hits')).toBe(100);
    });

    it('never exceeds the limit under 50 concurrent adds at the edge', async () => {
      const { counters } = h().store;
      await counters.add('quota', 7);
      const results = await Promise.all(
        Array.from({ length: 50 }, () => counters.add('quota', 1, { limit: 10 })),
      );
      expect(results.filter((r) => r.applied)).toHaveLength(3);
      for (const r of results) expect(r.value).toBeLessThanOrEqual(10);
      expect(results.filter((r) => !r.applied).every((r) => r.value === 10)).toBe(true);
      expect(await counters.get('quota')).toBe(10);

      const big = await Promise.all(
        Array.from({ length: 50 }, () => counters.add('chunks', 3, { limit: 25 })),
      );
      expect(big.filter((r) => r.applied)).toHaveLength(8);
      expect(await counters.get('chunks')).toBe(24);
    });

    it('addMany applies every delta, a repeated key twice, and skips zero deltas', async () => {
      const { counters } = h().store;
      await counters.add('stats:b', 10);
      await counters.addMany([
        { key: 'stats:a', delta: 2 },
        { key: 'stats:b', delta: -4 },
        { key: 'stats:zero', delta: 0 },
        { key: 'stats:a', delta: 3 },
      ]);
      // A zero delta creates no counter: it is absent from the list, not listed at 0.
      expect(await counters.list('stats:')).toEqual({ 'stats:a': 5, 'stats:b': 6 });
      await counters.addMany([]);
      expect(await counters.list('stats:')).toEqual({ 'stats:a': 5, 'stats:b': 6 });
    });

    it('addMany is exact under 50 concurrent batches mixed with single adds', async () => {
      const { counters } = h().store;
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          i % 5 === 0
            ? counters.add('mix:a', 1)
            : counters.addMany([
                { key: 'mix:a', delta: 1 },
                { key: 'mix:b', delta: 2 },
              ]),
        ),
      );
      expect(await counters.get('mix:a')).toBe(50);
      expect(await counters.get('mix:b')).toBe(80);
    });

    it('addMany refuses a delta that is not a safe integer and writes nothing', async () => {
      const { counters } = h().store;
      for (const bad of [0.5, Number.NaN, 2 ** 60]) {
        await expect(
          counters.addMany([
            { key: 'bad:a', delta: 1 },
            { key: 'bad:b', delta: bad },
          ]),
        ).rejects.toThrow(RangeError);
      }
      expect(await counters.list('bad:')).toEqual({});
    });

    it('lists the counters under a prefix', async () => {
      const { counters } = h().store;
      await counters.add('rate:t1:a', 1);
      await counters.add('rate:t1:b', 2);
      await counters.add('rate:t2:a', 3);
      await counters.add('rate_t1', 4);
      expect(await counters.list('rate:t1:')).toEqual({ 'rate:t1:a': 1, 'rate:t1:b': 2 });
      expect(await counters.list('nothing:')).toEqual({});
    });
  });
}
