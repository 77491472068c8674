import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REGISTRY_GENERATION_COUNTER, registryRecords } from '../registry-records.ts';
import { seedRecord, seedVersions } from '../testing/seed-registry.ts';
import { createSearchIndex } from './search-index.ts';
import { normalizeSearchQuery } from './search-query.ts';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-search-index-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function request(q?: string) {
  const normalized = normalizeSearchQuery(q === undefined ? {} : { q });
  if ('problem' in normalized) throw new Error(normalized.problem);
  return normalized.request;
}

describe('search index', () => {
  it('rebuilds when the generation counter moves, and only then', async () => {
    const index = createSearchIndex(store);
    await seedVersions(store, [{ name: 'alpha-pkg', version: '1.0.0' }]);
    expect((await index.search(request())).results.map((r) => r.name)).toEqual(['alpha-pkg']);
    const generation = index.generation;
    expect(generation).toBe(await store.counters.get(REGISTRY_GENERATION_COUNTER));

    // Written without a bump: the index keeps its snapshot (it does not re-read the store per query).
    await registryRecords(store).versions.insert(seedRecord({ name: 'beta-pkg', version: '1.0.0' }));
    expect((await index.search(request())).results.map((r) => r.name)).toEqual(['alpha-pkg']);

    await store.counters.add(REGISTRY_GENERATION_COUNTER, 1);
    expect((await index.search(request())).results.map((r) => r.name)).toEqual(['alpha-pkg', 'beta-pkg']);
    expect(index.generation).toBe(generation + 1);
  });

  it('a second index over the same store file (another registry process) sees a package published after its first search', async () => {
    const other = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    try {
      const mine = createSearchIndex(store);
      const theirs = createSearchIndex(other);
      expect((await theirs.search(request('claims'))).total).toBe(0);
      await seedVersions(store, [{ name: 'claims-desk', version: '1.0.0' }]);
      expect((await mine.search(request('claims'))).results.map((r) => r.name)).toEqual(['claims-desk']);
      expect((await theirs.search(request('claims'))).results.map((r) => r.name)).toEqual(['claims-desk']);
    } finally {
      await other.close();
    }
  });

  it('answers concurrent searches from one build', async () => {
    await seedVersions(store, Array.from({ length: 50 }, (_, i) => ({ name: `pkg-${i}`, version: '1.0.0' })));
    const versions = registryRecords(store).versions;
    let reads = 0;
    const counting: Store = {
      ...store,
      counters: store.counters,
      log: store.log.bind(store),
      collection: ((name: string, options?: object) => {
        const inner = store.collection(name, options);
        return name === 'registry_versions'
          ? {
              ...inner,
              find: (query?: object) => {
                reads++;
                return versions.find(query);
              },
            }
          : inner;
      }) as Store['collection'],
    };
    const index = createSearchIndex(counting);
    const results = await Promise.all(Array.from({ length: 8 }, () => index.search(request('pkg'))));
    expect(results.every((r) => r.total === 50)).toBe(true);
    expect(reads).toBe(1);
  });
});
