import { afterEach, beforeEach } from 'vitest';
import type { Store } from '@agent-platform/store';

/** What the conformance suite hands an adapter factory. */
export interface StoreConformanceContext {
  /**
   * The suite's hand-moved clock. Adapters must use it for TTL visibility; it starts at the real
   * current time (so a server-side TTL monitor never purges documents the suite still expects)
   * and only moves when a test advances it.
   */
  now: () => Date;
}

/** One fresh, empty store per test, plus how to reopen its data and how to remove it. */
export interface StoreUnderTest {
  store: Store;
  /**
   * Opens a new store on the same data (new connection/file handle). The suite closes the
   * previous store first. Omit it when the adapter cannot be reopened; durability is then skipped.
   */
  reopen?: () => Promise<Store>;
  /** Removes what the factory created (temp dir, test database). Runs after every store is closed. */
  cleanup: () => Promise<void>;
}

export type StoreFactory = (ctx: StoreConformanceContext) => Promise<StoreUnderTest>;

export interface StoreHarness {
  /** The currently open store (replaced by `reopen`). */
  readonly store: Store;
  now(): Date;
  /** Moves the factory's clock forward. */
  advance(ms: number): void;
  /** Closes the current store and reopens the same data; undefined if the adapter cannot. */
  readonly reopen: (() => Promise<Store>) | undefined;
  /**
   * Opens a second store on the same data while the current one stays open, as another process
   * would (closed after the test); undefined if the adapter cannot be reopened.
   */
  readonly another: (() => Promise<Store>) | undefined;
  /** Closes the current store now (the harness will not close it again). */
  close(): Promise<void>;
}

/**
 * Registers beforeEach/afterEach hooks in the calling `describe` and returns an accessor for
 * the current test's harness. Every store the test received is closed before `cleanup`.
 */
export function useStoreHarness(factory: StoreFactory): () => StoreHarness {
  let current: StoreHarness | undefined;
  let opened = new Set<Store>();
  let cleanup: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    let nowMs = Date.now();
    const now = () => new Date(nowMs);
    const sut = await factory({ now });
    cleanup = sut.cleanup;
    opened = new Set([sut.store]);
    let store = sut.store;
    const reopenData = sut.reopen;
    const close = async () => {
      opened.delete(store);
      await store.close();
    };
    current = {
      get store() {
        return store;
      },
      now,
      advance: (ms) => {
        nowMs += ms;
      },
      close,
      reopen:
        reopenData === undefined
          ? undefined
          : async () => {
              await close();
              store = await reopenData();
              opened.add(store);
              return store;
            },
      another:
        reopenData === undefined
          ? undefined
          : async () => {
              const other = await reopenData();
              opened.add(other);
              return other;
            },
    };
  });

  afterEach(async () => {
    for (const store of opened) await store.close();
    await cleanup?.();
    current = undefined;
    cleanup = undefined;
    opened = new Set();
  });

  return () => {
    if (current === undefined) throw new Error('store harness used outside a test');
    return current;
  };
}
