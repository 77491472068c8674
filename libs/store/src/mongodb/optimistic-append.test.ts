import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { chainLink, expectGaplessChain } from '@agent-platform/testkit';
import type { ChainEntry } from '@agent-platform/testkit';
import type { LogEntry } from '../store.ts';
import { appendOptimistically, jitterMs, MAX_APPEND_ATTEMPTS, SerialQueue } from './optimistic-append.ts';
import type { AppendOps } from './optimistic-append.ts';

/**
 * A log collection with MongoDB's guarantees that matter here: `_id` (seq) is unique and each
 * operation is atomic. Every operation yields first, so concurrent appends interleave between
 * reading the tip and inserting, as appends from several processes do.
 */
function uniqueSeqLog<T>() {
  const rows = new Map<number, T>();
  const ops: AppendOps<T> = {
    readTip: async () => {
      await yieldToLoop();
      if (rows.size === 0) return null;
      const seq = Math.max(...rows.keys());
      return { ...(rows.get(seq) as T), seq };
    },
    tryInsert: async (seq, { body }) => {
      await yieldToLoop();
      if (rows.has(seq)) return false;
      rows.set(seq, JSON.parse(body) as T);
      return true;
    },
    backoff: () => yieldToLoop(),
  };
  const entries = (): LogEntry<T>[] =>
    [...rows.entries()].sort(([a], [b]) => a - b).map(([seq, fields]) => ({ ...fields, seq }));
  return { rows, ops, entries };
}

describe('append log: optimistic append', () => {
  it('keeps one gapless chain, each builder seeing the true tip, when 50 writers race', async () => {
    const log = uniqueSeqLog<ChainEntry>();
    let builds = 0;
    const appended = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        appendOptimistically<ChainEntry>(
          log.ops,
          (tip) => {
            builds++;
            return chainLink(`w${i % 5}`, i)(tip);
          },
          'chain',
        ),
      ),
    );
    expectGaplessChain(log.entries(), 50);
    expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    // The writers really did collide and rebuild; one build each would mean no race was tested.
    expect(builds).toBeGreaterThan(50);
  });

  it('stores nothing when the builder throws, and ignores a seq the builder copied from the tip', async () => {
    const log = uniqueSeqLog<{ n: number; seq?: number }>();
    await appendOptimistically(log.ops, () => ({ n: 1 }), 'l');
    await expect(
      appendOptimistically(
        log.ops,
        () => {
          throw new Error('builder refused');
        },
        'l',
      ),
    ).rejects.toThrow('builder refused');
    await expect(appendOptimistically(log.ops, () => [] as never, 'l')).rejects.toThrow(TypeError);
    expect(log.rows.size).toBe(1);
    const second = await appendOptimistically(log.ops, (tip) => ({ ...tip!, n: 2 }), 'l');
    expect(second).toEqual({ n: 2, seq: 2 });
    expect(log.rows.get(2)).toEqual({ n: 2 });
  });

  it('gives up with a clear error after losing every race, backing off between attempts', async () => {
    const backoffs: number[] = [];
    const alwaysTaken: AppendOps<{ n: number }> = {
      readTip: async () => null,
      tryInsert: async () => false,
      backoff: async (attempt) => {
        backoffs.push(attempt);
      },
    };
    await expect(appendOptimistically(alwaysTaken, () => ({ n: 1 }), 'audit')).rejects.toThrow(
      `append to log 'audit': lost ${MAX_APPEND_ATTEMPTS} races in a row`,
    );
    expect(backoffs).toEqual(Array.from({ length: MAX_APPEND_ATTEMPTS - 1 }, (_, i) => i + 1));
  });

  it('jitters between 0 and min(2^attempt, 50) ms', () => {
    expect(jitterMs(1, () => 0)).toBe(0);
    expect(jitterMs(1, () => 0.999)).toBe(1);
    expect(jitterMs(3, () => 0.999)).toBe(7);
    expect(jitterMs(30, () => 0.999)).toBe(49);
  });

  it('runs queued tasks one at a time in call order, past a failing one', async () => {
    const queue = new SerialQueue();
    const events: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        events.push(`start ${name}`);
        await yieldToLoop();
        events.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      queue.run(task('a')),
      queue.run(task('b', true)),
      queue.run(task('c')),
    ]);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
