import { describe, expect, it } from 'vitest';
import { remember } from '../read-cache-table.ts';
import { ReadCaches } from './read-cache.ts';

describe('ReadCaches', () => {
  it('looks at data_version once per synchronous stretch, and empties every table when it moved', async () => {
    let version = 1;
    let looks = 0;
    const caches = new ReadCaches(() => {
      looks += 1;
      return version;
    });
    remember(caches.tableFor('c_a').docs, 'x', { doc: { id: 'x' }, version: 1 }, 'docs');
    expect(caches.tableFor('c_a').docs.has('x')).toBe(true);
    expect(caches.tableFor('c_b').docs.size).toBe(0);
    expect(looks).toBe(1);

    // Another connection commits: the next stretch looks again and finds nothing cached.
    version = 2;
    await Promise.resolve();
    expect(caches.tableFor('c_a').docs.has('x')).toBe(false);
    expect(looks).toBe(2);
  });

  it('forgets one table on a write of it, and all of them on forgetAll', async () => {
    const caches = new ReadCaches(() => 1);
    remember(caches.tableFor('c_a').docs, 'x', { doc: { id: 'x' }, version: 1 }, 'docs');
    remember(caches.tableFor('c_b').docs, 'y', { doc: { id: 'y' }, version: 1 }, 'docs');
    caches.forget('c_a');
    expect(caches.tableFor('c_a').docs.size).toBe(0);
    expect(caches.tableFor('c_b').docs.size).toBe(1);
    caches.forgetAll();
    expect(caches.tableFor('c_b').docs.size).toBe(0);
  });

  it('hands out frozen answers, nested values included', () => {
    const caches = new ReadCaches(() => 1);
    const kept = remember(caches.tableFor('c_a').docs, 'x', { doc: { id: 'x', tags: ['a'], nested: { n: 1 } }, version: 1 }, 'docs');
    const doc = kept.doc as { tags: string[]; nested: { n: number } };
    expect(() => doc.tags.push('b')).toThrow(TypeError);
    expect(() => {
      doc.nested.n = 2;
    }).toThrow(TypeError);
  });
});
