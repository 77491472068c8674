import type { SearchEntry } from './search-entry.ts';
import type { SearchFilter } from './search-filter.ts';

/**
 * Slots by type, by keyword and by category (each category also under every one of its
 * ancestors, since a category filter matches sub-paths). A filter search walks the smallest set
 * its filters name instead of every package; passesFilter still judges each candidate on every
 * filter (region included, which has no set: a package for every region matches any region, so
 * its set would be most of the index). Changed in place, one package at a time (`put`).
 */
export class FilterIndex {
  private readonly byType = new Map<string, Set<number>>();
  private readonly byKeyword = new Map<string, Set<number>>();
  private readonly byCategory = new Map<string, Set<number>>();

  /** Puts `next` in `slot` in place of `previous` (either null: a package appearing or gone). */
  put(slot: number, previous: SearchEntry | null, next: SearchEntry | null): void {
    if (previous !== null) for (const [map, key] of this.keysOf(previous)) remove(map, key, slot);
    if (next !== null) for (const [map, key] of this.keysOf(next)) add(map, key, slot);
  }

  /** Slots that may pass `filter`, in no particular order; null when no filter narrows them (walk everything). */
  candidates(filter: SearchFilter): ReadonlySet<number> | null {
    const sets = [
      filter.type === undefined ? null : (this.byType.get(filter.type) ?? NONE),
      filter.keyword === undefined ? null : (this.byKeyword.get(filter.keyword) ?? NONE),
      filter.category === undefined ? null : (this.byCategory.get(filter.category) ?? NONE),
    ].filter((set) => set !== null);
    if (sets.length === 0) return null;
    return sets.reduce((smallest, set) => (set.size < smallest.size ? set : smallest));
  }

  /** The (set map, key) pairs an entry is listed under. */
  private keysOf(entry: SearchEntry): Array<[Map<string, Set<number>>, string]> {
    const keys: Array<[Map<string, Set<number>>, string]> = [[this.byType, entry.view.type]];
    for (const keyword of entry.keywords) keys.push([this.byKeyword, keyword]);
    for (const category of entry.categories) {
      const parts = category.split('/');
      for (let depth = 1; depth <= parts.length; depth++) keys.push([this.byCategory, parts.slice(0, depth).join('/')]);
    }
    return keys;
  }
}

const NONE: ReadonlySet<number> = new Set();

function add(map: Map<string, Set<number>>, key: string, slot: number): void {
  const set = map.get(key);
  if (set === undefined) map.set(key, new Set([slot]));
  else set.add(slot);
}

function remove(map: Map<string, Set<number>>, key: string, slot: number): void {
  const set = map.get(key);
  if (set === undefined) return;
  set.delete(slot);
  if (set.size === 0) map.delete(key);
}
