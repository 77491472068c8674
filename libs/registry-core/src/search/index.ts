export { createSearchIndex, type SearchIndex, type SearchRequest } from './search-index.ts';
export { DEFAULT_PER_PAGE, MAX_PER_PAGE, normalizeSearchQuery } from './search-query.ts';
export { latestListed } from './search-entry.ts';
export { WEIGHTS } from './search-ranking.ts';
