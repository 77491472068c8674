import type { RegistrySearchResult } from '@agent-platform/contracts';
import type { SearchEntry } from './search-entry.ts';
import { FilterIndex } from './filter-index.ts';
import { passesFilter, type SearchFilter } from './search-filter.ts';
import type { TextQuery } from './search-ranking.ts';
import { TextIndex } from './text-index.ts';

/** A normalized search (normalizeSearchQuery): the text, the filters and the page. */
export interface SearchRequest {
  text: TextQuery | null;
  filter: SearchFilter;
  page: number;
  perPage: number;
}

/**
 * The searchable packages in memory: one entry per package (its latest listed version), its
 * words (TextIndex) and its filter values (FilterIndex), changed in place one package at a time.
 * Each package name gets a slot, its number for the life of the index (a package whose every
 * version is yanked keeps its slot, empty, and gets it back when a version is listed again).
 * Searching is synchronous: a change (also synchronous) is never seen half made.
 */
export class PackageIndex {
  private readonly slotOf = new Map<string, number>();
  private readonly entries: (SearchEntry | null)[] = [];
  /** The occupied slots, sorted by name: an empty query lists in this order, and ties keep it. */
  private readonly order: number[] = [];
  /** slot -> its position in `order` (occupied slots only); rebuilt after a change of `order`. */
  private rank = new Int32Array(0);
  private readonly text: TextIndex;
  private readonly filters = new FilterIndex();
  /** Package name -> the slots whose entry depends on it (reverse dependencies). */
  private readonly dependents = new Map<string, Set<number>>();

  /** The index of `entries` (one per package name), loaded at once. */
  constructor(entries: readonly SearchEntry[]) {
    const sorted = [...entries].sort((a, b) => compareNames(a.name, b.name));
    sorted.forEach((entry, slot) => {
      this.slotOf.set(entry.name, slot);
      this.entries.push(entry);
      this.order.push(slot);
      this.filters.put(slot, null, entry);
      this.putDependencies(slot, null, entry);
    });
    this.text = TextIndex.build(sorted);
    this.rerank();
  }

  /** How many packages a search can find. */
  get size(): number {
    return this.order.length;
  }

  /** Makes `entry` the package `name`'s entry; null takes the package out (every version yanked). */
  put(name: string, entry: SearchEntry | null): void {
    let slot = this.slotOf.get(name);
    if (slot === undefined) {
      if (entry === null) return;
      slot = this.entries.length;
      this.slotOf.set(name, slot);
      this.entries.push(null);
    }
    const previous = this.entries[slot]!;
    this.entries[slot] = entry;
    this.text.put(slot, previous, entry);
    this.filters.put(slot, previous, entry);
    this.putDependencies(slot, previous, entry);
    if ((previous === null) === (entry === null)) return;
    if (entry === null) this.order.splice(this.rank[slot]!, 1);
    else this.order.splice(this.insertionPoint(name), 0, slot);
    this.rerank();
  }

  search(request: SearchRequest): RegistrySearchResult {
    const { positions, scoreOf } = request.text === null ? this.listed(request.filter) : this.ranked(request.text, request.filter);
    const start = (request.page - 1) * request.perPage;
    // Only the page shown is copied into response objects.
    const results = positions.slice(start, start + request.perPage).map((slot) => ({ ...this.entries[slot]!.view, score: scoreOf(slot) }));
    return { total: positions.length, page: request.page, per_page: request.perPage, results };
  }

  /** The packages whose latest listed version depends on `name`, by name, with the constraint each asks for. */
  dependentsOf(name: string): Array<{ name: string; version: string; requirement: string }> {
    const slots = [...(this.dependents.get(name) ?? [])].sort((a, b) => this.rank[a]! - this.rank[b]!);
    return slots.map((slot) => {
      const entry = this.entries[slot]!;
      return { name: entry.name, version: entry.view.latest, requirement: entry.dependencies[name]! };
    });
  }

  private putDependencies(slot: number, previous: SearchEntry | null, next: SearchEntry | null): void {
    for (const dependency of Object.keys(previous?.dependencies ?? {})) {
      const set = this.dependents.get(dependency);
      set?.delete(slot);
      if (set?.size === 0) this.dependents.delete(dependency);
    }
    for (const dependency of Object.keys(next?.dependencies ?? {})) {
      const set = this.dependents.get(dependency);
      if (set === undefined) this.dependents.set(dependency, new Set([slot]));
      else set.add(slot);
    }
  }

  /** No text: every entry passing the filters, by name, all scored 0. */
  private listed(filter: SearchFilter): Hits {
    const candidates = this.filters.candidates(filter);
    const slots: number[] = [];
    if (candidates === null) {
      for (const slot of this.order) if (passesFilter(this.entries[slot]!, filter)) slots.push(slot);
    } else {
      for (const slot of candidates) if (passesFilter(this.entries[slot]!, filter)) slots.push(slot);
      slots.sort((a, b) => this.rank[a]! - this.rank[b]!);
    }
    return { positions: slots, scoreOf: ZERO };
  }

  /** Text: the matches passing the filters, best score first, ties by name. */
  private ranked(query: TextQuery, filter: SearchFilter): Hits {
    const { positions, scoreOf } = this.text.match(query);
    const kept = positions.filter((slot) => passesFilter(this.entries[slot]!, filter));
    kept.sort((a, b) => scoreOf(b) - scoreOf(a) || this.rank[a]! - this.rank[b]!);
    return { positions: kept, scoreOf };
  }

  /** Where in `order` a package named `name` goes. */
  private insertionPoint(name: string): number {
    let low = 0;
    let high = this.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareNames(this.entries[this.order[mid]!]!.name, name) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private rerank(): void {
    if (this.rank.length < this.entries.length) this.rank = new Int32Array(Math.max(16, this.entries.length * 2));
    this.order.forEach((slot, position) => {
      this.rank[slot] = position;
    });
  }
}

/** The hits of a search: slots in result order, and their scores. */
interface Hits {
  positions: readonly number[];
  scoreOf: (slot: number) => number;
}

const ZERO = () => 0;

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
