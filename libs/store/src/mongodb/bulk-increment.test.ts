import { describe, expect, it } from 'vitest';
import type { CounterDelta } from '../store.ts';
import { bulkIncrement, MAX_BULK_INCREMENT_ATTEMPTS } from './bulk-increment.ts';

/** Counters as documents, where the keys listed in `racing` lose their first insert `losses` times. */
function fakeServer(racing: Record<string, number> = {}) {
  const values = new Map<string, number>();
  const batches: string[][] = [];
  const write = async (batch: readonly CounterDelta[]): Promise<number[]> => {
    batches.push(batch.map((d) => d.key));
    const failed: number[] = [];
    batch.forEach(({ key, delta }, index) => {
      const losses = racing[key] ?? 0;
      if (losses > 0) {
        racing[key] = losses - 1;
        failed.push(index);
        return;
      }
      values.set(key, (values.get(key) ?? 0) + delta);
    });
    return failed;
  };
  return { values, batches, write };
}

describe('counters: addMany on MongoDB (bulk upserting $inc)', () => {
  it('sends the non-zero deltas in one bulk write', async () => {
    const server = fakeServer();
    await bulkIncrement(
      [
        { key: 'a', delta: 2 },
        { key: 'zero', delta: 0 },
        { key: 'b', delta: -3 },
        { key: 'a', delta: 1 },
      ],
      server.write,
    );
    expect(server.batches).toEqual([['a', 'b', 'a']]);
    expect(Object.fromEntries(server.values)).toEqual({ a: 3, b: -3 });
  });

  it('makes no round trip for an empty or all-zero batch', async () => {
    const server = fakeServer();
    await bulkIncrement([], server.write);
    await bulkIncrement([{ key: 'a', delta: 0 }], server.write);
    expect(server.batches).toEqual([]);
  });

  it('sends again only the deltas that lost a first-insert race, so none is applied twice', async () => {
    const server = fakeServer({ b: 1 });
    await bulkIncrement(
      [
        { key: 'a', delta: 1 },
        { key: 'b', delta: 5 },
      ],
      server.write,
    );
    expect(server.batches).toEqual([['a', 'b'], ['b']]);
    expect(Object.fromEntries(server.values)).toEqual({ a: 1, b: 5 });
  });

  it('gives up after repeated duplicate keys on the same delta', async () => {
    const server = fakeServer({ b: MAX_BULK_INCREMENT_ATTEMPTS });
    await expect(bulkIncrement([{ key: 'b', delta: 1 }], server.write)).rejects.toThrow(
      /kept losing the insert race/,
    );
    expect(server.batches).toHaveLength(MAX_BULK_INCREMENT_ATTEMPTS);
  });

  it('refuses a non-integer delta before writing anything', async () => {
    const server = fakeServer();
    await expect(
      bulkIncrement(
        [
          { key: 'a', delta: 1 },
          { key: 'b', delta: 0.5 },
        ],
        server.write,
      ),
    ).rejects.toThrow(RangeError);
    expect(server.batches).toEqual([]);
  });
});
