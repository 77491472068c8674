import { MongoClient, MongoServerError } from 'mongodb';
import type { ClientSession, Collection, Db, Document } from 'mongodb';
import { redactMongoUrl, redactSecrets } from './mongo-url.ts';

/** How long `health()` waits for a ping before reporting the server down. */
export const HEALTH_TIMEOUT_MS = 5000;

/**
 * One MongoClient on one database. Every access goes through `collection()`, so any call after
 * `close()` fails with one error naming the store (and `collection()`/`log()` on a closed store
 * throw, as the embedded adapter's do). The connection string is kept only inside `redact`,
 * never in a field someone could log.
 */
export class MongoHandle {
  private db: Db | null;

  private constructor(
    private client: MongoClient | null,
    readonly dbName: string,
    readonly redact: (text: string) => string,
  ) {
    this.db = client?.db(dbName) ?? null;
  }

  /** A handle whose client connects on first use (the driver's auto-connect). */
  static create(url: string, dbName: string): MongoHandle {
    const redact = (text: string) => redactSecrets(text, url);
    try {
      return new MongoHandle(new MongoClient(url, { appName: 'agent-platform' }), dbName, redact);
    } catch (err) {
      throw connectionError(err, url);
    }
  }

  /**
   * Connects and pings, so a wrong host or wrong credentials fail at boot, not on first request.
   * Bounded by the driver's own timeouts (`serverSelectionTimeoutMS`, 30 s unless the URL says).
   */
  static async connect(url: string, dbName: string): Promise<MongoHandle> {
    const handle = MongoHandle.create(url, dbName);
    try {
      await handle.ping(null);
      return handle;
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw connectionError(err, url);
    }
  }

  get isOpen(): boolean {
    return this.db !== null;
  }

  collection<T extends Document>(name: string): Collection<T> {
    if (this.db === null) throw new Error('mongodb store is closed');
    return this.db.collection<T>(name);
  }

  /**
   * `fn` in one multi-document transaction (the driver retries it on a transient error, so `fn`
   * must only write through `session`). Needs a replica set or a sharded cluster: MongoDB has no
   * transactions on a standalone server (docs/architecture.md "Store (MongoDB)").
   */
  async transaction<R>(fn: (session: ClientSession) => Promise<R>): Promise<R> {
    if (this.client === null) throw new Error('mongodb store is closed');
    return this.client.withSession((session) => session.withTransaction(() => fn(session)));
  }

  /** One `ping` command, abandoned (not cancelled) after `timeoutMs` unless that is null. */
  async ping(timeoutMs: number | null = HEALTH_TIMEOUT_MS): Promise<void> {
    if (this.db === null) throw new Error('mongodb store is closed');
    const ping = this.db.command({ ping: 1 });
    if (timeoutMs === null) {
      await ping;
      return;
    }
    void ping.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to ping within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Idempotent. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.db = null;
    await client?.close();
  }
}

/**
 * True for a duplicate-key write error (code 11000). Every write this adapter makes touches one
 * document, so the driver reports it as a `MongoServerError` carrying the server's code.
 */
export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}

function connectionError(err: unknown, url: string): Error {
  const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  // No `cause`: the driver's error may quote the connection string, password included.
  return new Error(`mongodb store: cannot connect to ${redactMongoUrl(url)}: ${redactSecrets(reason, url)}`);
}
