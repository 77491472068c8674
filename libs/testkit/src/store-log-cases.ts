import { describe, expect, it } from 'vitest';
import type { AppendLog, LogEntry } from '@agent-platform/store';
import type { StoreHarness } from './store-harness.ts';

/** A chained entry: `prev` names the entry the builder saw as tip, as the audit chain does. */
export interface ChainEntry {
  writer: string;
  n: number;
  prev: string | null;
  at?: string;
  actor?: string;
}

/** A pure builder for chain entries: links to whatever tip it is given. */
export function chainLink(writer: string, n: number, extra: Partial<ChainEntry> = {}) {
  return (tip: LogEntry<ChainEntry> | null): ChainEntry => ({
    writer,
    n,
    prev: tip === null ? null : `${tip.writer}#${tip.n}@${tip.seq}`,
    ...extra,
  });
}

/**
 * Asserts `entries` (ascending) are seqs 1..n with no gap or fork and that each builder saw the
 * true tip, i.e. each entry's `prev` names exactly the entry stored before it.
 */
export function expectGaplessChain(entries: readonly LogEntry<ChainEntry>[], length: number): void {
  expect(entries.map((e) => e.seq)).toEqual(Array.from({ length }, (_, i) => i + 1));
  entries.forEach((entry, i) => {
    const before = entries[i - 1];
    expect(entry.prev).toBe(before === undefined ? null : `${before.writer}#${before.n}@${before.seq}`);
  });
}

/** AppendLog guarantees: linearizable appends with the true tip, filtered listing, scans. */
export function logCases(h: () => StoreHarness): void {
  const chain = (): AppendLog<ChainEntry> => h().store.log<ChainEntry>('chain', { indexes: ['actor', 'at'] });

  describe('append log', () => {
    it('starts empty and numbers entries from 1, handing the builder the tip', async () => {
      expect(await chain().tip()).toBeNull();
      expect(await chain().count()).toBe(0);
      expect(await chain().list()).toEqual([]);
      expect(await chain().scan(1, 10)).toEqual([]);
      const seen: (number | null)[] = [];
      const first = await chain().append((tip) => {
        seen.push(tip?.seq ?? null);
        return chainLink('w', 1)(tip);
      });
      expect(first).toEqual({ writer: 'w', n: 1, prev: null, seq: 1 });
      const second = await chain().append(chainLink('w', 2));
      expect(second).toEqual({ writer: 'w', n: 2, prev: 'w#1@1', seq: 2 });
      expect(seen).toEqual([null]);
      expect(await chain().tip()).toEqual(second);
      expect(await chain().count()).toBe(2);
    });

    it('serializes 200 concurrent appends into one gapless chain', async () => {
      const log = chain();
      const appended = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          h()
            .store.log<ChainEntry>('chain')
            .append(chainLink(`w${i % 4}`, i)),
        ),
      );
      expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
      expectGaplessChain(await log.scan(1, 1000), 200);
      expect((await log.tip())?.seq).toBe(200);
      expect(await log.count()).toBe(200);
    });

    it('stores nothing when the builder throws', async () => {
      await chain().append(chainLink('w', 1));
      await expect(
        chain().append(() => {
          throw new Error('builder refused');
        }),
      ).rejects.toThrow('builder refused');
      expect(await chain().count()).toBe(1);
      expect((await chain().append(chainLink('w', 2))).seq).toBe(2);
    });

    it('lists newest first by default, with where, since, order and limit', async () => {
      const log = chain();
      const rows: [string, string][] = [
        ['ann', '2030-01-01T00:00:00.000Z'],
        ['bob', '2030-01-02T00:00:00.000Z'],
        ['ann', '2030-01-03T00:00:00.000Z'],
        ['bob', '2030-01-04T00:00:00.000Z'],
        ['ann', '2030-01-05T00:00:00.000Z'],
      ];
      for (const [i, [actor, at]] of rows.entries()) await log.append(chainLink('w', i, { actor, at }));
      const seqs = (entries: LogEntry<ChainEntry>[]) => entries.map((e) => e.seq);
      expect(seqs(await log.list())).toEqual([5, 4, 3, 2, 1]);
      expect(seqs(await log.list({ order: 'asc' }))).toEqual([1, 2, 3, 4, 5]);
      expect(seqs(await log.list({ where: { actor: 'ann' } }))).toEqual([5, 3, 1]);
      expect(seqs(await log.list({ since: { field: 'at', value: '2030-01-03T00:00:00.000Z' } }))).toEqual([
        5, 4, 3,
      ]);
      expect(
        seqs(
          await log.list({
            where: { actor: 'bob' },
            since: { field: 'at', value: '2030-01-02T00:00:00.000Z' },
            order: 'asc',
            limit: 1,
          }),
        ),
      ).toEqual([2]);
      expect(seqs(await log.list({ limit: 2 }))).toEqual([5, 4]);
      expect((await log.list({ where: { actor: 'bob' }, limit: 1 }))[0]).toEqual({
        writer: 'w',
        n: 3,
        prev: 'w#2@3',
        actor: 'bob',
        at: '2030-01-04T00:00:00.000Z',
        seq: 4,
      });
    });

    it('scans ascending from a seq with a limit', async () => {
      const log = chain();
      for (let i = 1; i <= 7; i++) await log.append(chainLink('w', i));
      expect((await log.scan(3, 2)).map((e) => e.seq)).toEqual([3, 4]);
      expect((await log.scan(6, 100)).map((e) => e.seq)).toEqual([6, 7]);
      expect(await log.scan(8, 10)).toEqual([]);
    });

    it('keeps separate logs independent', async () => {
      await h().store.log<ChainEntry>('one').append(chainLink('a', 1));
      await h().store.log<ChainEntry>('one').append(chainLink('a', 2));
      expect((await h().store.log<ChainEntry>('two').append(chainLink('b', 1))).seq).toBe(1);
      expect(await h().store.log('one').count()).toBe(2);
    });
  });
}
