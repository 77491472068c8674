import { emptyTableReadCache, type TableReadCache } from '../read-cache-table.ts';

/** The table of write versions of read-mostly tables (migration 3, pg-migrations.ts). */
export const READ_VERSIONS_TABLE = 'ap_read_versions';
/** The statement trigger every cached collection's table carries (pg-collection.ts). */
export const READ_VERSION_TRIGGER = 'ap_read_version';
/** The trigger function it runs: bumps the table's row of `ap_read_versions`. */
export const READ_VERSION_FUNCTION = 'ap_bump_read_version';

/** Each cached table's write version as the database has it now (a table never written: absent). */
export type LookAtVersions = () => Promise<ReadonlyMap<string, number>>;

/**
 * The answers of read-mostly collections on PostgreSQL (`CollectionOptions.readMostly`: API keys,
 * agents, competencies, skills, triggers, webhooks), kept per process between writes so that a
 * request's reads of them cost one small shared statement instead of one each
 * (docs/postgres.md "Read-mostly collections").
 *
 * Every write to a cached table, by any process on any host, bumps that table's row of
 * `ap_read_versions` in the same transaction (a statement trigger: INSERT, UPDATE, DELETE and
 * TRUNCATE, whoever runs them, restores included). A cached read first waits for a **look**: one
 * `SELECT` of every table's version, **sent after the read was asked for**; a table whose version
 * moved since the last look has its cache emptied. So a cached answer is one the database gave at
 * a moment after the read was asked for, as an uncached read's would be: a write acknowledged
 * (committed) before the read was asked for is in it, wherever it was made.
 *
 * Looks are shared: while one is on its way, every read asked for meanwhile waits for the next
 * one, sent when the first is answered. Under load a process thus makes one look per round trip,
 * however many reads it serves; a lone caller pays one look per read (a round trip, as the read
 * itself would have been, but a smaller statement and no JSON to parse).
 */
export class PgReadVersions {
  private readonly tables = new Map<string, { version: number | undefined; cache: TableReadCache }>();
  /** Every table's version at the last look (tables not cached yet are compared on first use). */
  private seen: ReadonlyMap<string, number> = new Map();
  /** The look on its way to the server, if any. */
  private sent: Promise<void> | null = null;
  /** The look that goes when `sent` is answered; not sent yet, so a read may still join it. */
  private next: Promise<void> | null = null;

  constructor(private readonly look: LookAtVersions) {}

  /** The table's cache, as of a look sent after this call. Rejects when the look fails. */
  async tableFor(table: string): Promise<TableReadCache> {
    await this.fresh();
    let entry = this.tables.get(table);
    if (entry === undefined) {
      entry = { version: this.seen.get(table), cache: emptyTableReadCache() };
      this.tables.set(table, entry);
    }
    return entry.cache;
  }

  private fresh(): Promise<void> {
    if (this.next !== null) return this.next;
    if (this.sent === null) return this.send();
    const previous = this.sent;
    const next: Promise<void> = previous.then(
      () => this.sendNext(next),
      () => this.sendNext(next),
    );
    this.next = next;
    return next;
  }

  private sendNext(self: Promise<void>): Promise<void> {
    if (this.next === self) this.next = null;
    return this.send();
  }

  private send(): Promise<void> {
    const sent = this.look().then((versions) => this.apply(versions));
    this.sent = sent;
    const done = (): void => {
      if (this.sent === sent) this.sent = null;
    };
    sent.then(done, done);
    return sent;
  }

  /** Empties the cache of every table whose version is not the one its answers were read at. */
  private apply(versions: ReadonlyMap<string, number>): void {
    this.seen = versions;
    for (const [table, entry] of this.tables) {
      const version = versions.get(table);
      if (version !== entry.version) this.tables.set(table, { version, cache: emptyTableReadCache() });
    }
  }
}
