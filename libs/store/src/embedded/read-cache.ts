import { emptyTableReadCache, type TableReadCache } from '../read-cache-table.ts';

/**
 * The documents of read-mostly collections (`CollectionOptions.readMostly`: API keys, agents,
 * competencies, skills, triggers, webhooks), kept parsed and frozen between writes so that a
 * request's reads of them skip SQLite and JSON (docs/performance.md "Read-mostly collections").
 *
 * A cached answer is always one the database would give now:
 * - every write of this connection to a table empties that table's cache, inside the write's
 *   own batch (`forget`), whatever collection handle made it;
 * - a commit by any other connection (another process on the same file, a worker thread) bumps
 *   SQLite's `PRAGMA data_version`, checked before the cached reads of each synchronous stretch:
 *   then every table's cache is emptied (`tableFor`);
 * - a cache is filled only from a read made outside any transaction (the group commit opens and
 *   commits its transaction within one synchronous call, so a read never sees a write that could
 *   still roll back).
 * Documents handed out are frozen: a caller that changed one would change it for every later
 * reader, so it throws instead.
 */
export class ReadCaches {
  private readonly tables = new Map<string, TableReadCache>();
  private seenVersion: number | null = null;
  /**
   * True from a look at `data_version` until the microtask queue gets past it: the cached reads
   * of one synchronous stretch share the look (a look costs a read transaction, about as much as
   * the read it spares). That stretch reads no socket, so no request in it can depend on a commit
   * another process acknowledged after the look: one that came before its request was read is
   * older than the look, and the look saw it.
   */
  private looked = false;
  private readonly lookAgain = (): void => {
    this.looked = false;
  };

  constructor(private readonly dataVersion: () => number) {}

  /** The table's cache, emptied first when another connection committed since the last look. */
  tableFor(table: string): TableReadCache {
    if (!this.looked) {
      const version = this.dataVersion();
      if (version !== this.seenVersion) {
        this.tables.clear();
        this.seenVersion = version;
      }
      this.looked = true;
      queueMicrotask(this.lookAgain);
    }
    let cache = this.tables.get(table);
    if (cache === undefined) {
      cache = emptyTableReadCache();
      this.tables.set(table, cache);
    }
    return cache;
  }

  /** A write of this connection to `table` (called inside the write, before its statements). */
  forget(table: string): void {
    this.tables.delete(table);
  }

  /** Everything (a restore replaced tables wholesale). */
  forgetAll(): void {
    this.tables.clear();
  }
}
