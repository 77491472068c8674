import { describe, expect, it } from 'vitest';
import type { StoreHarness } from './store-harness.ts';

/** Counters guarantees: exact under concurrency, and a limit that is never exceeded. */
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
