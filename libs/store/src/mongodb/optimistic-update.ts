import { StoreConflictError, StoreDuplicateError } from '../store.ts';
import type { Collection, Doc, Versioned } from '../store.ts';

/** Writers racing on one document retry this often before `update` gives up. */
export const MAX_UPDATE_ATTEMPTS = 50;

/**
 * `Collection.update` for an adapter without a lock across a read and a write: read, call
 * `change`, then write with the version read (or insert when absent), and start over when
 * another writer got there first (a version conflict, or the document created meanwhile). Every
 * write is a single-document atomic operation with the version in its filter, so no concurrent
 * change is ever overwritten.
 */
export async function optimisticUpdate<T extends Doc>(
  collection: Pick<Collection<T>, 'get' | 'insert' | 'replace'>,
  name: string,
  id: string,
  change: (current: Versioned<T> | null) => T | null,
): Promise<Versioned<T> | null> {
  for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
    const current = await collection.get(id);
    const next = change(current);
    if (next === null) return current;
    if (next?.id !== id) throw new TypeError(`${name}: update of '${id}' must keep the document's id`);
    try {
      return current === null
        ? await collection.insert(next)
        : await collection.replace(next, current.version);
    } catch (error) {
      if (error instanceof StoreConflictError) continue;
      // A duplicate on create is a race only if the document now exists; else a unique index clashed.
      if (error instanceof StoreDuplicateError && current === null && (await collection.get(id)) !== null)
        continue;
      throw error;
    }
  }
  throw new StoreConflictError(name, id);
}
