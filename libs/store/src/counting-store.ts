import { AsyncLocalStorage } from 'node:async_hooks';
import type { AppendLog, Collection, CollectionOptions, Counters, Doc, LogOptions, Store } from './store.ts';

/** Whether an operation reads or writes (a write is one transaction of its own on every adapter). */
export type StoreOperationKind = 'read' | 'write';

/** One store operation as the decorator saw it: `collections.get`, `log:audit.append`, `counters.add`. */
export interface StoreOperation {
  kind: StoreOperationKind;
  /** `<collection>.<method>`, `log:<name>.<method>` or `counters.<method>`. */
  name: string;
  /**
   * The synchronous run of code that made the call (it changes at every await): operations of
   * one turn were submitted together, so the embedded store commits them in one transaction.
   */
  turn: number;
  /**
   * The turn of the event loop that made the call (it changes when the loop moves on, not at an
   * await that resolves at once): the embedded store commits the writes submitted in one such turn
   * together (group-commit.ts schedules its commit with `setImmediate`), so the number of batches
   * with writes is the number of commits a route waits for, one after another.
   */
  batch: number;
}

/** A counter that moves on once per `schedule` after it was read: many reads in between share a number. */
function ticker(schedule: (advance: () => void) => void): () => number {
  let value = 0;
  let ending = false;
  return () => {
    if (!ending) {
      ending = true;
      schedule(() => {
        value += 1;
        ending = false;
      });
    }
    return value;
  };
}

/** The current synchronous turn: the number moves on at the next microtask checkpoint. */
const currentTurn = ticker(queueMicrotask);
/** The current turn of the event loop: the number moves on at the next `setImmediate`. */
const currentBatch = ticker((advance) => setImmediate(advance));

/** The operations made inside one `StoreOperationCounter.measure` call, in the order they were made. */
export interface StoreOperationTally {
  readonly operations: StoreOperation[];
  readonly reads: number;
  readonly writes: number;
}

/**
 * Counts the store operations a piece of work makes (docs/performance.md "Store operations per
 * route"): a decorator over the port that records each call in the asynchronous context that
 * made it. Work started inside `measure` (a request injected into the api, and the in-process
 * bus request it makes to the worker) is attributed to it, whatever else runs concurrently;
 * work that runs in another context (a background sweep, a durable-stream consumer) is not.
 *
 * Test and benchmark instrument: production processes never wrap their store with it.
 */
export class StoreOperationCounter {
  private readonly context = new AsyncLocalStorage<StoreOperation[] | typeof IGNORED>();
  /** Every operation of any context, while a `window` is open. */
  private everything: StoreOperation[] | null = null;

  /** The store to hand to the composition instead of `store`. */
  wrap(store: Store): Store {
    const record = (kind: StoreOperationKind, name: string): void => {
      const context = this.context.getStore();
      if (context === IGNORED) return;
      const operation = { kind, name, turn: currentTurn(), batch: currentBatch() };
      context?.push(operation);
      this.everything?.push(operation);
    };
    return countingStore(store, record);
  }

  /**
   * Every operation the process makes while `work` runs, in whatever context: for work that hops
   * onto a durable stream (a workflow step), whose consumer does not run in the caller's context.
   * Background services (sweeps) are counted too, if they run meanwhile.
   */
  async window<T>(work: () => Promise<T>): Promise<{ result: T; tally: StoreOperationTally }> {
    if (this.everything !== null) throw new Error('StoreOperationCounter: windows do not nest');
    const operations: StoreOperation[] = [];
    this.everything = operations;
    try {
      return { result: await work(), tally: tallyOf(operations) };
    } finally {
      this.everything = null;
    }
  }

  /** Runs `work` uncounted, even inside a window: the test's own reads (polling a run's state). */
  ignoring<T>(work: () => Promise<T>): Promise<T> {
    return this.context.run(IGNORED, work);
  }

  /** Runs `work` and returns what it resolved to with the operations it made. */
  async measure<T>(work: () => Promise<T>): Promise<{ result: T; tally: StoreOperationTally }> {
    const operations: StoreOperation[] = [];
    const result = await this.context.run(operations, work);
    return { result, tally: tallyOf(operations) };
  }
}

const IGNORED = Symbol('ignored');

export function tallyOf(operations: StoreOperation[]): StoreOperationTally {
  return {
    operations,
    reads: operations.filter((op) => op.kind === 'read').length,
    writes: operations.filter((op) => op.kind === 'write').length,
  };
}

type RecordOperation = (kind: StoreOperationKind, name: string) => void;

const COLLECTION_READS = ['get', 'find', 'count'] as const;
const COLLECTION_WRITES = ['insert', 'replace', 'upsert', 'update', 'delete'] as const;
const LOG_READS = ['tip', 'count', 'list', 'scan'] as const;
const LOG_WRITES = ['append', 'dropBefore'] as const;

function countingStore(store: Store, record: RecordOperation): Store {
  const counters = countingCounters(store.counters, record);
  return {
    collection<T extends Doc>(name: string, options?: CollectionOptions<T>): Collection<T> {
      return counted(store.collection<T>(name, options), name, COLLECTION_READS, COLLECTION_WRITES, record);
    },
    log<T extends object>(name: string, options?: LogOptions<T>): AppendLog<T> {
      return counted(store.log<T>(name, options), `log:${name}`, LOG_READS, LOG_WRITES, record);
    },
    counters,
    health: () => store.health(),
    close: () => store.close(),
    // Backups read the adapter's snapshots from the store itself (store-snapshots.ts): not counted.
    ...('snapshots' in store ? { snapshots: (store as { snapshots: unknown }).snapshots } : {}),
  };
}

function countingCounters(counters: Counters, record: RecordOperation): Counters {
  return counted(counters, 'counters', ['get', 'list'] as const, ['add', 'addMany', 'withdraw'] as const, record);
}

/** A copy of `target` whose listed async methods record themselves before delegating. */
function counted<T extends object>(
  target: T,
  name: string,
  reads: readonly (keyof T & string)[],
  writes: readonly (keyof T & string)[],
  record: RecordOperation,
): T {
  const wrapped: { [key: string]: unknown } = {};
  const wrap = (kind: StoreOperationKind, method: keyof T & string): void => {
    const original = target[method] as unknown as (...args: unknown[]) => unknown;
    wrapped[method] = (...args: unknown[]) => {
      record(kind, `${name}.${method}`);
      return original.apply(target, args);
    };
  };
  for (const method of reads) wrap('read', method);
  for (const method of writes) wrap('write', method);
  return wrapped as T;
}
