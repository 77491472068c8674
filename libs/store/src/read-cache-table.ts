import type { Versioned } from './store.ts';

/** Past this many documents (or find results) a table's cache starts over: a bound, not an LRU. */
const MAX_DOCS_PER_TABLE = 10_000;
const MAX_FINDS_PER_TABLE = 1_000;

/**
 * What one table's read cache holds: documents by id, and whole `find` answers by query. The
 * adapters that keep read-mostly collections in memory (`CollectionOptions.readMostly`) decide
 * when a table's cache is still what the database would answer (embedded/read-cache.ts,
 * postgres/pg-read-versions.ts); an emptied cache is a new object, so a read that was under way
 * fills the old one, which nobody looks at any more.
 */
export interface TableReadCache {
  readonly docs: Map<string, Versioned<unknown>>;
  readonly finds: Map<string, readonly Versioned<unknown>[]>;
}

export function emptyTableReadCache(): TableReadCache {
  return { docs: new Map(), finds: new Map() };
}

/**
 * Keeps `value` (frozen, deeply) under `key`, starting the map over when it is full. Documents
 * handed out of a cache are frozen: a caller that changed one would change it for every later
 * reader, so it throws instead.
 */
export function remember<V>(map: Map<string, V>, key: string, value: V, kind: 'docs' | 'finds'): V {
  if (map.size >= (kind === 'docs' ? MAX_DOCS_PER_TABLE : MAX_FINDS_PER_TABLE)) map.clear();
  map.set(key, deepFreeze(value));
  return value;
}

function deepFreeze<V>(value: V): V {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
