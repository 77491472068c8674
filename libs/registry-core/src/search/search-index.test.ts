import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REGISTRY_GENERATION_COUNTER, registryRecords } from '../registry-records.ts';
import { seedRecord, seedVersions, seedYank } from '../testing/seed-registry.ts';
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
  const names = async (index: ReturnType<typeof createSearchIndex>, q?: string) =>
    (await index.search(request(q))).results.map((r) => `${r.name}@${r.latest}`);

  it('follows the history: a publish, a new version, a yank and an un-yank change the index in place, without a reload', async () => {
    const index = createSearchIndex(store);
    await seedVersions(store, [{ name: 'alpha-pkg', version: '1.0.0' }]);
    expect(await names(index)).toEqual(['alpha-pkg@1.0.0']);
    expect(index.generation).toBe(await store.counters.get(REGISTRY_GENERATION_COUNTER));

    await seedVersions(store, [{ name: 'beta-pkg', version: '1.0.0' }, { name: 'alpha-pkg', version: '1.1.0' }]);
    expect(await names(index)).toEqual(['alpha-pkg@1.1.0', 'beta-pkg@1.0.0']);
    await seedYank(store, 'alpha-pkg', '1.1.0');
    expect(await names(index)).toEqual(['alpha-pkg@1.0.0', 'beta-pkg@1.0.0']);
    await seedYank(store, 'alpha-pkg', '1.0.0');
    expect(await names(index, 'alpha')).toEqual([]);
    await seedYank(store, 'alpha-pkg', '1.1.0', false);
    expect(await names(index, 'alpha')).toEqual(['alpha-pkg@1.1.0']);
    expect(index.stats).toEqual({ loads: 1, changes: 5 });
  });

  it('a version stored without its history line (a process killed between them) is found after the periodic reload, which no search waits for', async () => {
    let clock = 1_000_000;
    const index = createSearchIndex(store, { reloadEveryMs: 60_000, now: () => clock });
    await seedVersions(store, [{ name: 'alpha-pkg', version: '1.0.0' }]);
    expect(await names(index)).toEqual(['alpha-pkg@1.0.0']);

    // Stored, and even counted, but never announced in the history: a catch-up cannot know it.
    await registryRecords(store).versions.insert(seedRecord({ name: 'beta-pkg', version: '1.0.0' }));
    await store.counters.add(REGISTRY_GENERATION_COUNTER, 1);
    expect(await names(index)).toEqual(['alpha-pkg@1.0.0']);
    expect(index.reloading).toBeNull();

    clock += 60_000;
    // The search that starts the reload answers from the index it has.
    expect(await names(index)).toEqual(['alpha-pkg@1.0.0']);
    expect(index.reloading).not.toBeNull();
    // Changes made while the reload runs are caught up before it is swapped in.
    const reloaded = index.reloading;
    await seedVersions(store, [{ name: 'gamma-pkg', version: '1.0.0' }]);
    await reloaded;
    expect(await names(index)).toEqual(['alpha-pkg@1.0.0', 'beta-pkg@1.0.0', 'gamma-pkg@1.0.0']);
    expect(index.stats.loads).toBe(2);
  });

  it('a gap in the history (lines dropped before they were applied) loads everything again', async () => {
    const index = createSearchIndex(store);
    await seedVersions(store, [{ name: 'alpha-pkg', version: '1.0.0' }]);
    expect(await names(index)).toEqual(['alpha-pkg@1.0.0']);
    await seedVersions(store, [{ name: 'beta-pkg', version: '1.0.0' }, { name: 'gamma-pkg', version: '1.0.0' }, { name: 'delta-pkg', version: '1.0.0' }]);
    const { history } = registryRecords(store);
    const tip = (await history.tip())!.seq;
    await history.dropBefore(tip);
    expect(await names(index)).toEqual(['alpha-pkg@1.0.0', 'beta-pkg@1.0.0', 'delta-pkg@1.0.0', 'gamma-pkg@1.0.0']);
    expect(index.stats.loads).toBe(2);
  });

  it('a search that begins after a publish resolved shows it, with publishes and searches racing on two connections', async () => {
    const other = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    try {
      const index = createSearchIndex(other);
      await seedVersions(store, [{ name: 'racer', version: '1.0.0' }]);
      expect(await names(index, 'racer')).toEqual(['racer@1.0.0']);
      const searching = { on: true };
      const background = (async () => {
        while (searching.on) {
          await index.search(request('racer'));
          // Embedded reads resolve in microtasks: give the writes' group commit (a macrotask) its turn.
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      for (let minor = 1; minor <= 30; minor++) {
        await seedVersions(store, [{ name: 'racer', version: `1.${minor}.0` }, { name: `racer-${minor}`, version: '1.0.0' }]);
        const [seen, listed] = await Promise.all([names(index, 'racer'), index.search(request())]);
        expect(seen[0]).toBe(`racer@1.${minor}.0`);
        expect(listed.total).toBe(minor + 1);
      }
      searching.on = false;
      await background;
      expect(index.stats.loads).toBe(1);
    } finally {
      await other.close();
    }
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
