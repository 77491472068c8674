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

    it('lists exactly the keys under a prefix holding SQL wildcards, non-ASCII or astral characters', async () => {
      const { counters } = h().store;
      const keys = ['p%x', 'p_x', 'pax', 'é:1', 'é:2', 'f', '\u{1D11E}a', '\uFFFF', '\uFFFFa', '\u{10FFFF}z', 'z\u{10FFFF}', 'z\u{10FFFF}\u{10FFFF}'];
      for (const [i, key] of keys.entries()) await counters.add(key, i + 1);
      expect(await counters.list('p%')).toEqual({ 'p%x': 1 });
      expect(await counters.list('p_')).toEqual({ 'p_x': 2 });
      expect(await counters.list('é:')).toEqual({ 'é:1': 4, 'é:2': 5 });
      expect(await counters.list('\uFFFF')).toEqual({ '\uFFFF': 8, '\uFFFFa': 9 });
      expect(await counters.list('\u{1D11E}')).toEqual({ '\u{1D11E}a': 7 });
      expect(await counters.list('z\u{10FFFF}')).toEqual({ 'z\u{10FFFF}': 11, 'z\u{10FFFF}\u{10FFFF}': 12 });
      expect(Object.keys(await counters.list(''))).toHaveLength(keys.length);
    });

    it('forgets a counter once its expiry has passed: it reads 0, is not listed, and counts again from 0', async () => {
      const harness = h();
      const { counters } = harness.store;
      const soon = new Date(harness.now().getTime() + 60_000).toISOString();
      expect(await counters.add('window:a', 1, { expiresAt: soon })).toEqual({ value: 1, applied: true });
      expect(await counters.add('window:a', 1, { expiresAt: soon })).toEqual({ value: 2, applied: true });
      await counters.add('window:kept', 5);
      harness.advance(59_000);
      expect(await counters.get('window:a')).toBe(2);
      harness.advance(2_000);
      expect(await counters.get('window:a')).toBe(0);
      expect(await counters.list('window:')).toEqual({ 'window:kept': 5 });
      const later = new Date(harness.now().getTime() + 60_000).toISOString();
      expect(await counters.add('window:a', 1, { expiresAt: later })).toEqual({ value: 1, applied: true });
      expect(await counters.add('window:a', 3, { expiresAt: later, limit: 3 })).toEqual({ value: 1, applied: false });
    });

    it('applies a limit to an expired counter as if it were 0', async () => {
      const harness = h();
      const { counters } = harness.store;
      const soon = new Date(harness.now().getTime() + 1_000).toISOString();
      expect(await counters.add('quota:w', 3, { limit: 3, expiresAt: soon })).toEqual({ value: 3, applied: true });
      expect((await counters.add('quota:w', 1, { limit: 3, expiresAt: soon })).applied).toBe(false);
      harness.advance(2_000);
      const next = new Date(harness.now().getTime() + 1_000).toISOString();
      expect(await counters.add('quota:w', 2, { limit: 3, expiresAt: next })).toEqual({ value: 2, applied: true });
    });

    it('keeps the expiry an add without one finds, and never expires a counter given none', async () => {
      const harness = h();
      const { counters } = harness.store;
      await counters.add('e:1', 1, { expiresAt: new Date(harness.now().getTime() + 1_000).toISOString() });
      await counters.add('e:1', 1);
      await counters.add('e:forever', 1);
      harness.advance(10 * 365 * 24 * 3_600_000);
      expect(await counters.get('e:1')).toBe(0);
      expect(await counters.get('e:forever')).toBe(1);
    });

    describe('idempotent adds (once) and their withdrawal', () => {
      const day = (harness: StoreHarness) => new Date(harness.now().getTime() + 86_400_000).toISOString();

      it('applies an add once per id and answers a repeat with the value, changing nothing', async () => {
        const harness = h();
        const { counters } = harness.store;
        const once = { id: 'hold:a', until: day(harness) };
        expect(await counters.add('tx', 1, { once, limit: 5 })).toEqual({ value: 1, applied: true });
        expect(await counters.add('tx', 1, { once, limit: 5 })).toEqual({
          value: 1,
          applied: false,
          repeated: true,
        });
        expect(await counters.add('tx', 1, { once })).toEqual({ value: 1, applied: false, repeated: true });
        expect(await counters.add('tx', 1, { once: { id: 'hold:b', until: day(harness) } })).toEqual({
          value: 2,
          applied: true,
        });
        expect(await counters.get('tx')).toBe(2);
      });

      it('does not use the id of an add its limit refused', async () => {
        const harness = h();
        const { counters } = harness.store;
        const once = { id: 'hold:refused', until: day(harness) };
        await counters.add('full', 3);
        expect(await counters.add('full', 1, { once, limit: 3 })).toEqual({ value: 3, applied: false });
        await counters.add('full', -1);
        expect(await counters.add('full', 1, { once, limit: 3 })).toEqual({ value: 3, applied: true });
      });

      it('withdraws an applied add exactly once, and a later add under its id changes nothing', async () => {
        const harness = h();
        const { counters } = harness.store;
        const once = { id: 'hold:w', until: day(harness) };
        await counters.add('held', 10);
        await counters.add('held', 3, { once });
        expect(await counters.withdraw(once)).toBe('withdrawn');
        expect(await counters.get('held')).toBe(10);
        expect(await counters.withdraw(once)).toBe('already');
        expect(await counters.add('held', 3, { once })).toEqual({
          value: 10,
          applied: false,
          repeated: true,
        });
        expect(await counters.get('held')).toBe(10);
      });

      it('a withdrawal before the add prevents it', async () => {
        const harness = h();
        const { counters } = harness.store;
        const once = { id: 'hold:p', until: day(harness) };
        expect(await counters.withdraw(once)).toBe('prevented');
        expect(await counters.add('prevented', 1, { once, limit: 10 })).toEqual({
          value: 0,
          applied: false,
          repeated: true,
        });
        expect(await counters.withdraw(once)).toBe('already');
        expect(await counters.get('prevented')).toBe(0);
      });

      it('applies once and withdraws once under 20 concurrent adds and withdrawals of one id', async () => {
        const harness = h();
        const { counters } = harness.store;
        const once = { id: 'hold:race', until: day(harness) };
        const adds = await Promise.all(
          Array.from({ length: 20 }, () => counters.add('raced', 1, { once, limit: 100 })),
        );
        expect(adds.filter((r) => r.applied)).toHaveLength(1);
        expect(await counters.get('raced')).toBe(1);
        const withdrawals = await Promise.all(Array.from({ length: 20 }, () => counters.withdraw(once)));
        expect(withdrawals.filter((w) => w === 'withdrawn')).toHaveLength(1);
        expect(await counters.get('raced')).toBe(0);
      });

      it('settles each id exactly once when its add races its withdrawal', async () => {
        const harness = h();
        const { counters } = harness.store;
        const ids = Array.from({ length: 30 }, (_, i) => ({ id: `hold:rw:${i}`, until: day(harness) }));
        const outcomes = await Promise.all(
          ids.map(async (once, i) => {
            // Both orders, started together: whichever lands first, the counter ends where it began.
            const [add, withdrawal] =
              i % 2 === 0
                ? await Promise.all([counters.add('rw', 1, { once }), counters.withdraw(once)])
                : ((
                    await Promise.all([counters.withdraw(once), counters.add('rw', 1, { once })])
                  ).reverse() as [
                    Awaited<ReturnType<typeof counters.add>>,
                    Awaited<ReturnType<typeof counters.withdraw>>,
                  ]);
            return { add, withdrawal };
          }),
        );
        for (const { add, withdrawal } of outcomes) {
          if (add.applied) expect(withdrawal).toBe('withdrawn');
          else expect([add.repeated, withdrawal]).toEqual([true, 'prevented']);
        }
        expect(await counters.get('rw')).toBe(0);
      });

      it('forgets an id after its until: the id may then be used again', async () => {
        const harness = h();
        const { counters } = harness.store;
        const once = { id: 'hold:old', until: new Date(harness.now().getTime() + 1_000).toISOString() };
        await counters.add('aged', 1, { once });
        harness.advance(2_000);
        expect(await counters.add('aged', 1, { once: { ...once, until: day(harness) } })).toEqual({
          value: 2,
          applied: true,
        });
      });
    });
  });
}
