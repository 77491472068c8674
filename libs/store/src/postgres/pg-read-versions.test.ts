import { describe, expect, it } from 'vitest';
import { remember } from '../read-cache-table.ts';
import { PgReadVersions } from './pg-read-versions.ts';

/** A look function whose answers the test gives by hand, one per look sent. */
function looks() {
  const sent: Array<{ answer: (versions: Record<string, number>) => void; fail: (error: Error) => void }> = [];
  const look = () =>
    new Promise<ReadonlyMap<string, number>>((resolve, reject) => {
      sent.push({ answer: (versions) => resolve(new Map(Object.entries(versions))), fail: reject });
    });
  return { sent, look };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('PgReadVersions', () => {
  it('answers a read only after a look sent after it was asked: reads asked while a look is on its way share the next one', async () => {
    const { sent, look } = looks();
    const reads = new PgReadVersions(look);
    let firstDone = false;
    const first = reads.tableFor('c_a').then(() => (firstDone = true));
    expect(sent).toHaveLength(1);

    // Asked while the first look is on its way: that look may predate a write acknowledged
    // before these reads were asked, so they wait for the next one, sent once it is answered.
    let laterDone = 0;
    const later = [reads.tableFor('c_a'), reads.tableFor('c_b')].map((p) => p.then(() => (laterDone += 1)));
    await settled();
    expect(sent).toHaveLength(1);

    sent[0]!.answer({ c_a: 1 });
    await first;
    expect(firstDone).toBe(true);
    await settled();
    expect(laterDone).toBe(0);
    expect(sent).toHaveLength(2);

    sent[1]!.answer({ c_a: 1 });
    await Promise.all(later);
    expect(laterDone).toBe(2);
    expect(sent).toHaveLength(2);
  });

  it("empties a table's cache when its version moved, and keeps the others'", async () => {
    const { sent, look } = looks();
    const reads = new PgReadVersions(look);
    // One read at a time, its look answered with `versions`.
    const answered = async (versions: Record<string, number>, ...tables: string[]) => {
      const caches = [];
      for (const table of tables) {
        const cache = reads.tableFor(table);
        sent.at(-1)!.answer(versions);
        caches.push(await cache);
      }
      return caches;
    };
    const [a, b] = await answered({ c_a: 1, c_b: 7 }, 'c_a', 'c_b');
    remember(a!.docs, 'x', { doc: { id: 'x' }, version: 1 }, 'docs');
    remember(b!.docs, 'y', { doc: { id: 'y' }, version: 1 }, 'docs');

    const [a2, b2] = await answered({ c_a: 1, c_b: 7 }, 'c_a', 'c_b');
    expect(a2!.docs.has('x')).toBe(true);
    expect(b2!.docs.has('y')).toBe(true);

    // Another process wrote c_b (its trigger bumped the version): c_b starts over, c_a does not.
    const [a3, b3] = await answered({ c_a: 1, c_b: 8 }, 'c_a', 'c_b');
    expect(a3!.docs.has('x')).toBe(true);
    expect(b3!.docs.size).toBe(0);

    // A table first written after it was cached (no row before) starts over too.
    const [c] = await answered({ c_a: 1, c_b: 8 }, 'c_c');
    remember(c!.docs, 'z', { doc: { id: 'z' }, version: 1 }, 'docs');
    const [c2] = await answered({ c_a: 1, c_b: 8, c_c: 1 }, 'c_c');
    expect(c2!.docs.size).toBe(0);
  });

  it('rejects the reads waiting for a look that failed, and sends a new look for the next read', async () => {
    const { sent, look } = looks();
    const reads = new PgReadVersions(look);
    const first = reads.tableFor('c_a');
    const waiting = reads.tableFor('c_a');
    sent[0]!.fail(new Error('postgres store: connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settled();
    // The waiting read's own look went after the failure.
    expect(sent).toHaveLength(2);
    sent[1]!.answer({});
    await expect(waiting).resolves.toBeDefined();

    const next = reads.tableFor('c_a');
    expect(sent).toHaveLength(3);
    sent[2]!.answer({});
    await expect(next).resolves.toBeDefined();
  });
});
