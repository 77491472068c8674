import type { RegistrySearchResult, RegistryVersion } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { REGISTRY_GENERATION_COUNTER, registryRecords } from '../registry-records.ts';
import { PackageIndex, type SearchRequest } from './package-index.ts';
import { latestListed, searchEntry, type SearchEntry } from './search-entry.ts';

export type { SearchRequest } from './package-index.ts';

/** GET /search over the registry's published packages. */
export interface SearchIndex {
  search(request: SearchRequest): Promise<RegistrySearchResult>;
  /** Reverse dependencies: the packages whose latest listed version depends on `name`, caught up as a search is. */
  dependents(name: string): Promise<Array<{ name: string; version: string; requirement: string }>>;
  /** The generation the index is up to (the store counter's value it last caught up with); -1 before the first search. */
  readonly generation: number;
  /** How the index kept up so far: loads of every version, and packages changed in place (tests, docs). */
  readonly stats: { loads: number; changes: number };
  /** The background reload a search started, if one is running (tests wait for it). */
  readonly reloading: Promise<void> | null;
}

export interface SearchIndexOptions {
  /** How old a load may get before a search starts the next one, in the background (default 10 minutes). */
  reloadEveryMs?: number;
  /** Milliseconds now (default `Date.now`). */
  now?: () => number;
  /** Told when a background reload fails (the index keeps serving what it has). */
  onReloadError?: (error: unknown) => void;
}

/** History lines read per page while catching up. */
const CATCH_UP_PAGE = 500;
const RELOAD_EVERY_MS = 10 * 60_000;

interface Caught {
  /** Every change whose counter bump is at most this is in the index. */
  generation: number;
  /** The last history line applied: the next catch-up reads from the one after it. */
  historySeq: number;
  index: PackageIndex;
}

/**
 * An in-memory index of the latest listed version of each package (latestListed: a package whose
 * versions are all yanked is not in it), kept up to date in place (issue 25: a search never waits
 * for the whole index to be rebuilt). docs/registry.md "Search".
 *
 * Every search first reads `REGISTRY_GENERATION_COUNTER` (one counter read). When it moved, the
 * index catches up from the registry's history log: every publish, yank, un-yank and owner change
 * stores its change, then appends a history line naming its package, then bumps the counter
 * (registry-context.ts `afterChange`). The lines after the last one applied name every package that
 * changed; each is read again (its versions, one indexed `find`) and put in the index in place.
 * Read in this order, nothing is missed: the counter, then the lines, then the versions. A change
 * whose bump the counter showed has its line already, and a version read after its line is at
 * least as new as the line; a line read early (its bump not yet made) re-reads a package, which is
 * harmless. Several registry processes over one store each catch up the same way, so each answers
 * what was last published, yanked or un-yanked. Concurrent searches share one catch-up.
 *
 * The first search loads every version. After that a load happens in the background, started by a
 * search once the last load is `reloadEveryMs` old and swapped in when it has caught up (searches
 * meanwhile answer from the index in place): it picks up what was written around the history (a
 * registry process killed between storing a version and appending its line, which leaves the
 * version stored and unannounced). A gap in the history (lines dropped) also loads, in the search.
 */
export function createSearchIndex(store: Store, options: SearchIndexOptions = {}): SearchIndex {
  const { versions, history } = registryRecords(store);
  const reloadEveryMs = options.reloadEveryMs ?? RELOAD_EVERY_MS;
  const now = options.now ?? Date.now;
  let caught: Caught | null = null;
  let loadedAt = 0;
  /** The one job changing `caught` at a time: a catch-up, or a reload being brought up to date. */
  let changing: Promise<void> | null = null;
  let reloading: Promise<void> | null = null;
  const stats = { loads: 0, changes: 0 };

  const load = async (): Promise<Caught> => {
    const startedAt = now();
    const historySeq = (await history.tip())?.seq ?? 0;
    const generation = await store.counters.get(REGISTRY_GENERATION_COUNTER);
    const byName = new Map<string, RegistryVersion[]>();
    for (const { doc } of await versions.find()) {
      const list = byName.get(doc.name);
      if (list === undefined) byName.set(doc.name, [doc]);
      else list.push(doc);
    }
    const entries: SearchEntry[] = [];
    for (const list of byName.values()) {
      const latest = latestListed(list);
      if (latest !== null) entries.push(searchEntry(latest));
    }
    stats.loads++;
    loadedAt = startedAt;
    return { generation, historySeq, index: new PackageIndex(entries) };
  };

  /** The entry of package `name` as the store has it now; null when nothing of it is listed. */
  const entryOf = async (name: string): Promise<SearchEntry | null> => {
    const latest = latestListed((await versions.find({ where: { name } })).map(({ doc }) => doc));
    return latest === null ? null : searchEntry(latest);
  };

  /** `from` brought up to `generation` (read before this call) from the history; null when the history has a gap. */
  const catchUp = async (from: Caught, generation: number): Promise<Caught | null> => {
    const changed = new Set<string>();
    let seq = from.historySeq;
    for (;;) {
      const lines = await history.scan(seq + 1, CATCH_UP_PAGE);
      if (lines.length > 0 && lines[0]!.seq !== seq + 1) return null;
      for (const line of lines) changed.add(line.name);
      if (lines.length > 0) seq = lines.at(-1)!.seq;
      if (lines.length < CATCH_UP_PAGE) break;
    }
    const entries = await Promise.all([...changed].map(async (name) => [name, await entryOf(name)] as const));
    for (const [name, entry] of entries) from.index.put(name, entry);
    stats.changes += entries.length;
    return { generation: Math.max(generation, from.generation), historySeq: seq, index: from.index };
  };

  /** Runs `job` once no other job changes `caught`. */
  const exclusively = async (job: () => Promise<void>): Promise<void> => {
    while (changing !== null) await changing.catch(() => {});
    const running = job().finally(() => {
      changing = null;
    });
    changing = running;
    return running;
  };

  const reload = async (): Promise<void> => {
    const fresh = await load();
    await exclusively(async () => {
      const generation = await store.counters.get(REGISTRY_GENERATION_COUNTER);
      caught = (await catchUp(fresh, generation)) ?? (await load());
    });
  };

  /** The index, caught up with at least the generation the counter showed when this search began. */
  const current = async (): Promise<PackageIndex> => {
    const generation = await store.counters.get(REGISTRY_GENERATION_COUNTER);
    for (;;) {
      if (caught !== null && caught.generation >= generation) return caught.index;
      if (changing === null) {
        void exclusively(async () => {
          caught = caught === null ? await load() : ((await catchUp(caught, generation)) ?? (await load()));
        }).catch(() => {});
      }
      // A job already running may have read the counter before this search did: look again after it.
      await changing;
    }
  };

  return {
    get generation() {
      return caught?.generation ?? -1;
    },
    stats,
    get reloading() {
      return reloading;
    },
    async dependents(name) {
      return (await current()).dependentsOf(name);
    },
    async search(request) {
      const index = await current();
      if (reloading === null && now() - loadedAt >= reloadEveryMs) {
        reloading = reload()
          .catch((error: unknown) => options.onReloadError?.(error))
          .finally(() => {
            reloading = null;
          });
      }
      return index.search(request);
    },
  };
}
