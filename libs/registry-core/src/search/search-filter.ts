import type { PackageType } from '@agent-platform/contracts';
import type { SearchEntry } from './search-entry.ts';

/** The filters of a search, normalized (normalizeSearchQuery). */
export interface SearchFilter {
  type?: PackageType;
  /** A taxonomy path without surrounding slashes, lower case. */
  category?: string;
  /** Upper case. */
  region?: string;
  /** Lower case. */
  keyword?: string;
}

/**
 * Whether `entry` passes every filter: `category` matches the path and its sub-paths
 * (`insurance` matches `insurance/claims`), `region` matches packages for that region and
 * packages for every region (no regions listed), `keyword` is an exact keyword.
 */
export function passesFilter(entry: SearchEntry, filter: SearchFilter): boolean {
  if (filter.type !== undefined && entry.view.type !== filter.type) return false;
  if (filter.keyword !== undefined && !entry.keywords.has(filter.keyword)) return false;
  if (filter.region !== undefined && entry.regions.size > 0 && !entry.regions.has(filter.region)) return false;
  if (filter.category !== undefined) {
    const category = filter.category;
    const below = `${category}/`;
    if (!entry.categories.some((c) => c === category || c.startsWith(below))) return false;
  }
  return true;
}
