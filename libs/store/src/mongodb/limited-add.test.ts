import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { addWithinLimit, decideAfterMiss, MAX_LIMITED_ADD_ATTEMPTS } from './limited-add.ts';
import type { LimitedAddOps } from './limited-add.ts';

/**
 * One counter document with MongoDB's single-document atomicity: each operation acts in one
 * synchronous step after yielding to the event loop, so concurrent adds interleave between
 * operations exactly as requests from several processes would.
 */
function atomicCounter(initial: number | null) {
  const state = { value: initial };
  const opsFor = (delta: number): LimitedAddOps => ({
    incrementIfAtMost: async (ceiling) => {
      await yieldToLoop();
      if (state.value === null || state.value > ceiling) return null;
      state.value += delta;
      return state.value;
    },
    read: async () => {
      await yieldToLoop();
      return state.value;
    },
    insertIfAbsent: async (value) => {
      await yieldToLoop();
      if (state.value !== null) return false;
      state.value = value;
      return true;
    },
  });
  return { state, opsFor };
}

describe('counters: add with a limit', () => {
  it('decides after a missed conditional increment: insert, refuse or retry', () => {
    expect(decideAfterMiss(null, 3, 25)).toEqual({ kind: 'insert' });
    expect(decideAfterMiss(null, 26, 25)).toEqual({ kind: 'refuse', value: 0 });
    expect(decideAfterMiss(null, -5, -1)).toEqual({ kind: 'insert' });
    expect(decideAfterMiss(24, 3, 25)).toEqual({ kind: 'refuse', value: 24 });
    expect(decideAfterMiss(10, 0, 10)).toEqual({ kind: 'retry' });
    expect(decideAfterMiss(5, 1, 10)).toEqual({ kind: 'retry' });
  });

  it('never exceeds the limit when 50 interleaved adds race to create and fill a counter', async () => {
    const counter = atomicCounter(null);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => addWithinLimit(counter.opsFor(3), 'chunks', 3, 25)),
    );
    expect(results.filter((r) => r.applied)).toHaveLength(8);
    expect(
      results
        .filter((r) => r.applied)
        .map((r) => r.value)
        .sort((a, b) => a - b),
    ).toEqual([3, 6, 9, 12, 15, 18, 21, 24]);
    expect(results.filter((r) => !r.applied).every((r) => r.value === 24)).toBe(true);
    expect(counter.state.value).toBe(24);
  });

  it('applies the add when a concurrent decrement lands between the miss and the read', async () => {
    const counter = atomicCounter(10);
    const ops = counter.opsFor(1);
    const read = ops.read;
    let reads = 0;
    ops.read = async () => {
      if (reads++ === 0) counter.state.value = 5; // another process released 5
      return read();
    };
    expect(await addWithinLimit(ops, 'quota', 1, 10)).toEqual({ value: 6, applied: true });
  });

  it('gives up with a clear error when the counter keeps changing under it', async () => {
    let calls = 0;
    const flapping: LimitedAddOps = {
      incrementIfAtMost: async () => {
        calls++;
        return null;
      },
      read: async () => 0,
      insertIfAbsent: async () => false,
    };
    await expect(addWithinLimit(flapping, 'quota', 1, 10)).rejects.toThrow(
      `counters: 'quota' kept changing under ${MAX_LIMITED_ADD_ATTEMPTS} limited adds in a row`,
    );
    expect(calls).toBe(MAX_LIMITED_ADD_ATTEMPTS);
  });
});
