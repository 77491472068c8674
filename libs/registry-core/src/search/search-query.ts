import type { RegistrySearchQuery } from '@agent-platform/contracts';
import { normalizeRegion } from '@agent-platform/packages';
import type { SearchRequest } from './search-index.ts';
import { words } from './search-entry.ts';

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;

/**
 * The one place a GET /search query's tolerated spellings are normalized (STYLE §2): `q`
 * trimmed and lower-cased, blank = no text (list everything by name); `category` lower-cased
 * without surrounding slashes; `region` upper-cased and checked against ISO 3166-1 (an unknown
 * code is refused rather than silently matching only the all-region packages); `keyword`
 * lower-cased; blank filters ignored. Answers the problem text for a bad value.
 */
export function normalizeSearchQuery(query: RegistrySearchQuery): { request: SearchRequest } | { problem: string } {
  const whole = (query.q ?? '').trim().toLowerCase();
  const textWords = words(whole);
  const request: SearchRequest = {
    text: textWords.length === 0 ? null : { whole, words: textWords },
    filter: {},
    page: query.page ?? 1,
    perPage: Math.min(query.per_page ?? DEFAULT_PER_PAGE, MAX_PER_PAGE),
  };
  if (query.type !== undefined) request.filter.type = query.type;
  const category = (query.category ?? '').trim().toLowerCase().replace(/^\/+|\/+$/g, '');
  if (category !== '') request.filter.category = category;
  const keyword = (query.keyword ?? '').trim().toLowerCase();
  if (keyword !== '') request.filter.keyword = keyword;
  const regionText = (query.region ?? '').trim();
  if (regionText !== '') {
    const region = normalizeRegion(regionText);
    if (region === undefined) return { problem: `region '${regionText.slice(0, 20)}' is not an ISO 3166-1 alpha-2 code (GET /regions lists them)` };
    request.filter.region = region;
  }
  return { request };
}
