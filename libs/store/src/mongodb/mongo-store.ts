import type {
  AppendLog,
  Collection,
  CollectionOptions,
  Doc,
  EngineHealth,
  LogOptions,
  Store,
} from '../store.ts';
import { MongoAppendLog } from './mongo-append-log.ts';
import { MongoCollection } from './mongo-collection.ts';
import { MongoCounters } from './mongo-counters.ts';
import { MongoHandle } from './mongo-handle.ts';
import { databaseNameFromUrl } from './mongo-url.ts';
import { SerialQueue } from './optimistic-append.ts';
import { HandleCache } from '../handle-cache.ts';

export interface MongoStoreOptions {
  /** Connection string, e.g. `mongodb://user:pass@host:27017/agent_platform`. Never logged. */
  url: string;
  /** Database to use; defaults to the URL path, else `agent_platform`. */
  dbName?: string;
  /** Time source for TTL visibility; defaults to the system clock. */
  clock?: () => Date;
}

/**
 * The store port on one MongoDB database (official driver). Every port operation is one
 * single-document atomic write or a read, so no transaction is ever opened; see each class and
 * docs/architecture.md ("Store (MongoDB)") for why each guarantee holds across processes.
 */
export class MongoStore implements Store {
  readonly counters: MongoCounters;
  /** Keyed by name and options, so repeated opens skip the (idempotent) index creation. */
  private readonly collections = new HandleCache();
  private readonly logs = new HandleCache();
  /** One per log name (whatever its options), shared by every handle on that log. */
  private readonly appendQueues = new Map<string, SerialQueue>();

  constructor(
    private readonly handle: MongoHandle,
    private readonly clock: () => Date,
  ) {
    this.counters = new MongoCounters(handle, clock);
  }

  collection<T extends Doc>(name: string, options: CollectionOptions<T> = {}): Collection<T> {
    return this.collections.get(name, options, () => new MongoCollection<T>(this.handle, name, options, this.clock));
  }

  log<T extends object>(name: string, options: LogOptions<T> = {}): AppendLog<T> {
    return this.logs.get(name, options, () => {
      let queue = this.appendQueues.get(name);
      if (queue === undefined) {
        queue = new SerialQueue();
        this.appendQueues.set(name, queue);
      }
      return new MongoAppendLog<T>(this.handle, name, options, queue);
    });
  }

  async health(): Promise<EngineHealth> {
    if (!this.handle.isOpen) return { kind: 'mongodb', status: 'down', detail: 'store is closed' };
    try {
      await this.handle.ping();
      return { kind: 'mongodb', status: 'ok' };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { kind: 'mongodb', status: 'down', detail: this.handle.redact(message) };
    }
  }

  /** Idempotent; afterwards every operation rejects with "mongodb store is closed". */
  async close(): Promise<void> {
    this.collections.clear();
    this.logs.clear();
    this.appendQueues.clear();
    await this.handle.close();
  }
}

/**
 * Connects (and pings, so a wrong host or wrong credentials fail here) and returns the store.
 * Errors name the URL with its password replaced by `***`.
 */
export async function openMongoStore(options: MongoStoreOptions): Promise<Store> {
  const dbName = options.dbName ?? databaseNameFromUrl(options.url);
  const handle = await MongoHandle.connect(options.url, dbName);
  return new MongoStore(handle, options.clock ?? (() => new Date()));
}
