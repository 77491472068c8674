import { createSearchIndex, type SearchIndex } from '@agent-platform/registry-core';
import type { Store } from '@agent-platform/store';
import type { RegistryRouteDeps } from './registry-route.ts';

const shared = new WeakMap<Store, SearchIndex>();

/**
 * The search index of a registry app, one per store: `GET /search`, the reverse dependencies and
 * the web page's search all answer from it, so the page finds exactly what the API finds and the
 * process keeps one index in memory, not one per route group.
 */
export function searchIndexFor(deps: Pick<RegistryRouteDeps, 'store' | 'logger'>): SearchIndex {
  let index = shared.get(deps.store);
  if (index === undefined) {
    index = createSearchIndex(deps.store, {
      onReloadError: (err) => deps.logger.warn({ err }, 'search index: the periodic reload failed; searches go on from the index in place'),
    });
    shared.set(deps.store, index);
  }
  return index;
}
