import type { SearchEntry } from './search-entry.ts';
import type { SearchFilter } from './search-filter.ts';

/**
 * Entry positions by type, by keyword and by category (each category also under every one of
 * its ancestors, since a category filter matches sub-paths), each list in entry order. A filter
 * search walks the shortest list its filters name instead of every package; passesFilter still
 * judges each candidate on every filter (region included, which has no list: a package for
 * every region matches any region, so its list would be most of the index).
 */
export interface FilterIndex {
  /** Positions that may pass `filter`, in entry order; null when no filter narrows them (walk everything). */
  candidates(filter: SearchFilter): readonly number[] | null;
}

const NONE: readonly number[] = [];

export function buildFilterIndex(entries: readonly SearchEntry[]): FilterIndex {
  const byType = new Map<string, number[]>();
  const byKeyword = new Map<string, number[]>();
  const byCategory = new Map<string, number[]>();
  const add = (map: Map<string, number[]>, key: string, index: number) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [index]);
    else if (list.at(-1) !== index) list.push(index);
  };
  entries.forEach((entry, index) => {
    add(byType, entry.view.type, index);
    for (const keyword of entry.keywords) add(byKeyword, keyword, index);
    for (const category of entry.categories) {
      const parts = category.split('/');
      for (let depth = 1; depth <= parts.length; depth++) add(byCategory, parts.slice(0, depth).join('/'), index);
    }
  });
  return {
    candidates(filter) {
      const lists = [
        filter.type === undefined ? null : (byType.get(filter.type) ?? NONE),
        filter.keyword === undefined ? null : (byKeyword.get(filter.keyword) ?? NONE),
        filter.category === undefined ? null : (byCategory.get(filter.category) ?? NONE),
      ].filter((list) => list !== null);
      if (lists.length === 0) return null;
      return lists.reduce((shortest, list) => (list.length < shortest.length ? list : shortest));
    },
  };
}
