/**
 * Which part of a store a snapshot or a restore covers: collections and logs by name, counters
 * by key prefix. `'all'` means every one, including those created after this was written.
 */
export interface StorePart {
  collections: 'all' | readonly string[];
  logs: 'all' | readonly string[];
  /** Counters whose key starts with one of these prefixes; `'all'` for every counter. */
  counterPrefixes: 'all' | readonly string[];
}

/** What a snapshot holds: documents per collection, entries per log, counters. */
export interface SnapshotSummary {
  collections: Record<string, number>;
  logs: Record<string, number>;
  counters: number;
}

export interface SnapshotRestoreOptions {
  /**
   * Counter prefixes whose live value is kept where it is higher than the snapshot's, so a
   * restore never hands back what was already used (licence spend and transactions).
   */
  keepHigherCounterPrefixes?: readonly string[];
}

/**
 * Consistent copies of a store and their atomic restore: what backups are made of (docs/backup.md).
 * A capability of the embedded and PostgreSQL adapters (each store's `snapshots`, read by
 * `storeSnapshotsOf`), both writing and reading one format: a SQLite file with the embedded
 * layout, so a snapshot made on either restores into either. A MongoDB deployment is backed up
 * with MongoDB's own tools.
 *
 * Guarantees:
 * - `snapshot` copies the part as of one instant (one read transaction) while every process keeps
 *   reading and writing the store, without holding up this process's event loop.
 * - `inspect` refuses a file that is not a sound snapshot (damaged, or not this store's layout).
 * - `restore` replaces the part in one write transaction: every reader, in any process sharing the
 *   store, sees all of the old part or all of the new one, and a crash at any moment leaves one of
 *   the two. Parts outside the selection are not touched.
 */
export interface StoreSnapshots {
  /** Writes the part, as of one instant, to `path` (a new file). */
  snapshot(path: string, part: StorePart): Promise<SnapshotSummary>;
  /** Checks the file at `path` and tells what it holds; throws `SnapshotError` naming the fault. */
  inspect(path: string): Promise<SnapshotSummary>;
  /** Replaces the part with the snapshot's content, in one transaction. */
  restore(path: string, part: StorePart, options?: SnapshotRestoreOptions): Promise<SnapshotSummary>;
}

/** A snapshot file that cannot be read or restored here; the message says why. */
export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

/**
 * The snapshots of a store whose adapter has them (`snapshots`: embedded, PostgreSQL); null for
 * any other (MongoDB). Reads the property rather than testing classes, so this package's entry
 * point loads no driver: a store of either adapter brings its own.
 */
export function storeSnapshotsOf(store: object): StoreSnapshots | null {
  const snapshots = (store as { snapshots?: unknown }).snapshots;
  return isStoreSnapshots(snapshots) ? snapshots : null;
}

function isStoreSnapshots(value: unknown): value is StoreSnapshots {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return ['snapshot', 'inspect', 'restore'].every((method) => typeof candidate[method] === 'function');
}
