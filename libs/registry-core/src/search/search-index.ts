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
      const hits = request.text === null ? listed(now, request.filter) : ranked(now, request.text, request.filter);
      const start = (request.page - 1) * request.perPage;
      // Only the page shown is copied into response objects.
      const results = hits.slice(start, start + request.perPage).map(({ index, score }) => ({ ...now.entries[index]!.view, score }));
      return { total: hits.length, page: request.page, per_page: request.perPage, results };
    },
  };
}

/** A match: the entry's position (entries are sorted by name) and its score. */
interface Hit {
  index: number;
  score: number;
}

/** No text: every entry passing the filters, by name. */
function listed({ entries, filters }: Snapshot, filter: SearchFilter): Hit[] {
  const hits: Hit[] = [];
  const candidates = filters.candidates(filter);
  if (candidates === null) {
    for (let index = 0; index < entries.length; index++) if (passesFilter(entries[index]!, filter)) hits.push({ index, score: 0 });
  } else {
    for (const index of candidates) if (passesFilter(entries[index]!, filter)) hits.push({ index, score: 0 });
  }
  return hits;
}

function ranked({ entries, text }: Snapshot, query: TextQuery, filter: SearchFilter): Hit[] {
  const hits: Hit[] = [];
  for (const [index, score] of text.match(query)) if (passesFilter(entries[index]!, filter)) hits.push({ index, score });
  // Entries are sorted by name, so their position breaks ties by name.
  hits.sort((a, b) => b.score - a.score || a.index - b.index);
  return hits;
}
