import type { RegistrySearchResult, RegistryVersion } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { REGISTRY_GENERATION_COUNTER, registryRecords } from '../registry-records.ts';
import { latestListed, searchEntry, type SearchEntry } from './search-entry.ts';
import { buildFilterIndex, type FilterIndex } from './filter-index.ts';
import { passesFilter, type SearchFilter } from './search-filter.ts';
import type { TextQuery } from './search-ranking.ts';
import { buildTextIndex, type TextIndex } from './text-index.ts';

/** A normalized search (normalizeSearchQuery): the text, the filters and the page. */
export interface SearchRequest {
  text: TextQuery | null;
  filter: SearchFilter;
  page: number;
  perPage: number;
}

/** GET /search over the registry's published packages. */
export interface SearchIndex {
  search(request: SearchRequest): Promise<RegistrySearchResult>;
  /** The generation of the snapshot last searched (the store counter's value when it was built); -1 before the first. */
  readonly generation: number;
}

interface Snapshot {
  generation: number;
  /** Sorted by name: an empty query is the list in this order, and ties keep it. */
  entries: SearchEntry[];
  text: TextIndex;
  filters: FilterIndex;
}

/**
 * An in-memory index of the latest listed version of each package (latestListed: a package
 * whose versions are all yanked is not in it), built from the store. Every search first reads
 * `REGISTRY_GENERATION_COUNTER` (one counter read) and rebuilds when it moved, so several
 * registry processes over one store all answer what was last published, yanked or un-yanked.
 *
 * The counter is read before the versions: a publish that lands during a build bumps the
 * counter after writing its version, so the next search sees a newer generation and rebuilds;
 * a snapshot is never labelled newer than what it read. Concurrent searches share one build.
 */
export function createSearchIndex(store: Store): SearchIndex {
  const { versions } = registryRecords(store);
  let snapshot: Snapshot | null = null;
  let building: { generation: number; done: Promise<Snapshot> } | null = null;

  const build = async (generation: number): Promise<Snapshot> => {
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
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { generation, entries, text: buildTextIndex(entries), filters: buildFilterIndex(entries) };
  };

  const current = async (): Promise<Snapshot> => {
    const generation = await store.counters.get(REGISTRY_GENERATION_COUNTER);
    if (snapshot !== null && snapshot.generation === generation) return snapshot;
    if (building !== null && building.generation === generation) return building.done;
    const started = { generation, done: build(generation) };
    building = started;
    try {
      const built = await started.done;
      if (snapshot === null || built.generation >= snapshot.generation) snapshot = built;
      return built;
    } finally {
      if (building === started) building = null;
    }
  };

  return {
    get generation() {
      return snapshot?.generation ?? -1;
    },
    async search(request) {
      const now = await current();
      const { positions, scoreOf } = request.text === null ? listed(now, request.filter) : ranked(now, request.text, request.filter);
      const start = (request.page - 1) * request.perPage;
      // Only the page shown is copied into response objects.
      const results = positions.slice(start, start + request.perPage).map((p) => ({ ...now.entries[p]!.view, score: scoreOf(p) }));
      return { total: positions.length, page: request.page, per_page: request.perPage, results };
    },
  };
}

/** The hits of a search: entry positions in result order (entries are sorted by name), and their scores. */
interface Hits {
  positions: readonly number[];
  scoreOf: (position: number) => number;
}

const ZERO = () => 0;

/** No text: every entry passing the filters, by name, all scored 0. */
function listed({ entries, filters }: Snapshot, filter: SearchFilter): Hits {
  const candidates = filters.candidates(filter);
  const positions: number[] = [];
  if (candidates === null) {
    for (let p = 0; p < entries.length; p++) if (passesFilter(entries[p]!, filter)) positions.push(p);
  } else {
    for (const p of candidates) if (passesFilter(entries[p]!, filter)) positions.push(p);
  }
  return { positions, scoreOf: ZERO };
}

/** Text: the matches passing the filters, best score first, ties by name. */
function ranked({ entries, text }: Snapshot, query: TextQuery, filter: SearchFilter): Hits {
  const { positions, scoreOf } = text.match(query);
  const kept = positions.filter((p) => passesFilter(entries[p]!, filter));
  kept.sort((a, b) => scoreOf(b) - scoreOf(a) || a - b);
  return { positions: kept, scoreOf };
}
