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

    it('hands every builder the true tip when two processes append by turns, in runs and one by one', async (ctx) => {
      const another = h().another;
      if (another === undefined) return ctx.skip();
      const other = (await another()).log<ChainEntry>('chain');
      // Runs of appends by one process, then the other: an adapter that remembers the tip it wrote
      // must notice every time the other process wrote since.
      const turns = [...'aababbbaaaba', ...'ab'.repeat(20)];
      let n = 0;
      for (const turn of turns) await (turn === 'a' ? chain() : other).append(chainLink(turn, n++));
      expectGaplessChain(await chain().scan(1, 1000), turns.length);
      expect((await other.tip())?.seq).toBe(turns.length);
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

    describe('dropBefore (retention)', () => {
      const seqsOf = async (log: AppendLog<ChainEntry>): Promise<number[]> => (await log.scan(1, 10_000)).map((e) => e.seq);

      it('removes the entries before a seq and nothing else; numbering continues after them', async () => {
        const log = chain();
        for (let i = 1; i <= 10; i++) await log.append(chainLink('w', i, { actor: i % 2 === 0 ? 'even' : 'odd' }));
        expect(await log.dropBefore(5)).toBe(4);
        expect(await seqsOf(log)).toEqual([5, 6, 7, 8, 9, 10]);
        expect(await log.count()).toBe(6);
        expect((await log.scan(1, 1))[0]?.seq).toBe(5);
        expect((await log.list({ where: { actor: 'odd' }, order: 'asc' })).map((e) => e.seq)).toEqual([5, 7, 9]);
        expect((await log.tip())?.seq).toBe(10);
        // Dropping what is already gone is a no-op: a re-run after a crash finishes nothing twice.
        expect(await log.dropBefore(5)).toBe(0);
        expect(await log.dropBefore(3)).toBe(0);
        const next = await log.append(chainLink('w', 11));
        expect(next).toMatchObject({ seq: 11, prev: 'w#10@10' });
      });

      it('appends above the true tip after another process appended and dropped the entries this one wrote', async (ctx) => {
        const another = h().another;
        if (another === undefined) return ctx.skip();
        const other = (await another()).log<ChainEntry>('chain');
        for (let i = 1; i <= 3; i++) await chain().append(chainLink('a', i));
        await other.append(chainLink('b', 4));
        await other.append(chainLink('b', 5));
        // Seq 4, the one after this process's last entry, is gone: only the tip says where to go on.
        expect(await other.dropBefore(5)).toBe(4);
        expect(await chain().append(chainLink('a', 6))).toMatchObject({ seq: 6, prev: 'b#5@5' });
        expect(await seqsOf(chain())).toEqual([5, 6]);
      });

      it('never removes the newest entry, so a log dropped to its tip keeps counting', async () => {
        const log = chain();
        for (let i = 1; i <= 3; i++) await log.append(chainLink('w', i));
        expect(await log.dropBefore(1_000)).toBe(2);
        expect(await seqsOf(log)).toEqual([3]);
        expect(await log.dropBefore(1_000)).toBe(0);
        expect((await log.append(chainLink('w', 4))).seq).toBe(4);
        expect(await h().store.log<ChainEntry>('empty').dropBefore(10)).toBe(0);
      });

      it('removes only the range from fromSeq, keeping the seqs listed in keep', async () => {
        const log = chain();
        for (let i = 1; i <= 10; i++) await log.append(chainLink('w', i));
        expect(await log.dropBefore(8, { fromSeq: 3, keep: [4, 6] })).toBe(3);
        expect(await seqsOf(log)).toEqual([1, 2, 4, 6, 8, 9, 10]);
        // Held entries stay through later drops that list them again; unlisted, they go.
        expect(await log.dropBefore(9, { keep: [6] })).toBe(4);
        expect(await seqsOf(log)).toEqual([6, 9, 10]);
        expect(await log.dropBefore(9)).toBe(1);
        expect(await seqsOf(log)).toEqual([9, 10]);
      });

      it('refuses a seq that is not an integer, removing nothing', async () => {
        const log = chain();
        for (let i = 1; i <= 3; i++) await log.append(chainLink('w', i));
        await expect(log.dropBefore(Number.NaN)).rejects.toThrow(/integer/);
        await expect(log.dropBefore(3, { keep: [1.5] })).rejects.toThrow(/integer/);
        expect(await log.count()).toBe(3);
      });

      it('loses no append that races with drops: every entry above the bound is kept, gapless and linked', async () => {
        const log = chain();
        for (let i = 1; i <= 50; i++) await log.append(chainLink('seed', i));
        const appends = Array.from({ length: 150 }, (_, i) => h().store.log<ChainEntry>('chain').append(chainLink(`w${i % 3}`, i)));
        // Bounds at or below the seeded tip (50): each drop's outcome is then fixed, whatever the order.
        const drops = [10, 20, 30, 40, 50].map((before) => log.dropBefore(before));
        const appended = await Promise.all(appends);
        const removed = (await Promise.all(drops)).reduce((a, b) => a + b, 0);
        expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => 51 + i));
        expect(removed).toBe(49);
        const left = await log.scan(1, 1_000);
        expect(left.map((e) => e.seq)).toEqual(Array.from({ length: 151 }, (_, i) => 50 + i));
        // Each kept entry still names the true entry before it (the chain above the bound is intact).
        left.slice(1).forEach((entry, i) => expect(entry.prev).toBe(`${left[i]!.writer}#${left[i]!.n}@${left[i]!.seq}`));
        expect((await log.tip())?.seq).toBe(200);
      });
    });

    it('keeps separate logs independent', async () => {
      await h().store.log<ChainEntry>('one').append(chainLink('a', 1));
      await h().store.log<ChainEntry>('one').append(chainLink('a', 2));
      expect((await h().store.log<ChainEntry>('two').append(chainLink('b', 1))).seq).toBe(1);
      expect(await h().store.log('one').count()).toBe(2);
    });
  });
}
