import { randomUUID } from 'node:crypto';
import type { Store } from '@agent-platform/store';
import { RETENTION_STATE_COLLECTION } from './sweep-audit.ts';

export const SWEEP_LOCK_ID = 'sweep-lock';
/** How often a hold's fence re-reads the lock while a delete batch is in flight. */
const FENCE_POLL_MS = 5;

interface LockRecord {
  id: string;
  /** The process sweeping now, or null. */
  holder: string | null;
  /** Unique per claim: only its renewals and release count (fencing). */
  token: string | null;
  /** The holder's lease: a holder that neither renews nor releases by then is taken over. */
  until: string;
  /** The schedule period being swept (null for a manual sweep). */
  period: number | null;
  /** The newest schedule period a sweep finished: each period is swept once. */
  done_period: number;
  /** Raised by every hold placed through the api (the hold fence, docs/retention.md "Holds placed during a sweep"). */
  hold_epoch?: number;
  /** The hold epoch the holder read when it began the delete batch in flight; null between batches. */
  deleting?: number | null;
}

export interface SweepClaim {
  token: string;
  /** The hold epoch when the lock was claimed: holds read after the claim include every hold of it. */
  holdEpoch: number;
  /** The holder whose lease had lapsed when this claim took over (a killed sweep), or null. */
  tookOverFrom: string | null;
}

/**
 * The lock of the retention sweep (one document in `retention_state`): one sweep at a time across
 * every process sharing the store, each schedule period swept once, and a sweep whose process died
 * (SIGKILL) taken over by another once its lease lapses, in the same period. It also carries
 * the hold fence (`hold_epoch`, `deleting`): a hold placed on any node is in force for the next
 * delete batch of any sweep before its POST answers.
 */
export interface SweepLock {
  /** Claims the sweep of `period` (null: a manual sweep, any time); null when done or held by a live holder. */
  claim(period: number | null): Promise<SweepClaim | null>;
  /** Extends the lease; false when another process took the lock over. */
  renew(token: string): Promise<boolean>;
  /**
   * Extends the lease and marks a delete batch in flight under the hold epoch it returns (null
   * when another process took the lock over): the batch must be filtered by holds at least that
   * new. `endDeletes` clears the mark.
   */
  beginDeletes(token: string): Promise<number | null>;
  endDeletes(token: string): Promise<void>;
  /**
   * The hold fence, after a hold was stored: raises the hold epoch, then waits until no delete
   * batch begun under an older epoch is in flight (a live holder's), so that once it resolves
   * every later batch of every process is filtered by holds that include the new one. A holder
   * that died mid-batch is waited for until its lease lapses, and never longer than `maxWaitMs`.
   */
  fenceHolds(maxWaitMs: number): Promise<void>;
  /** Ends the sweep; a finished schedule period is marked done. */
  release(token: string, donePeriod: number | null): Promise<void>;
  /** Who holds it now (null when free or lapsed). */
  holder(): Promise<string | null>;
}

export function createSweepLock(deps: {
  store: Store;
  now: () => Date;
  node: string;
  leaseMs: () => number;
}): SweepLock {
  const docs = deps.store.collection<LockRecord>(RETENTION_STATE_COLLECTION);
  const free = (): LockRecord => ({
    id: SWEEP_LOCK_ID,
    holder: null,
    token: null,
    until: new Date(0).toISOString(),
    period: null,
    done_period: -1,
  });
  const until = (): string => new Date(deps.now().getTime() + deps.leaseMs()).toISOString();

  return {
    async claim(period) {
      const token = randomUUID();
      let tookOverFrom: string | null = null;
      const after = await docs.update(SWEEP_LOCK_ID, (current) => {
        const lock = current?.doc ?? free();
        if (period !== null && lock.done_period >= period) return null;
        const live = lock.holder !== null && lock.until > deps.now().toISOString();
        if (live) return null;
        tookOverFrom = lock.holder;
        return { ...lock, holder: deps.node, token, until: until(), period, deleting: null };
      });
      return after?.doc.token === token
        ? { token, tookOverFrom, holdEpoch: after.doc.hold_epoch ?? 0 }
        : null;
    },
    async renew(token) {
      const after = await docs.update(SWEEP_LOCK_ID, (current) =>
        current?.doc.token === token ? { ...current.doc, until: until() } : null,
      );
      return after?.doc.token === token;
    },
    async beginDeletes(token) {
      const after = await docs.update(SWEEP_LOCK_ID, (current) =>
        current?.doc.token === token
          ? { ...current.doc, until: until(), deleting: current.doc.hold_epoch ?? 0 }
          : null,
      );
      return after?.doc.token === token ? (after.doc.hold_epoch ?? 0) : null;
    },
    async endDeletes(token) {
      await docs.update(SWEEP_LOCK_ID, (current) =>
        current?.doc.token === token && current.doc.deleting !== null
          ? { ...current.doc, deleting: null }
          : null,
      );
    },
    async fenceHolds(maxWaitMs) {
      const raised = await docs.update(SWEEP_LOCK_ID, (current) => {
        const lock = current?.doc ?? free();
        return { ...lock, hold_epoch: (lock.hold_epoch ?? 0) + 1 };
      });
      const epoch = raised!.doc.hold_epoch!;
      const giveUp = performance.now() + maxWaitMs;
      for (let lock = raised!.doc; ;) {
        const inFlight = lock.deleting ?? null;
        const live = lock.holder !== null && lock.until > deps.now().toISOString();
        if (!live || inFlight === null || inFlight >= epoch || performance.now() > giveUp) return;
        await new Promise((resolve) => setTimeout(resolve, FENCE_POLL_MS));
        lock = (await docs.get(SWEEP_LOCK_ID))?.doc ?? free();
      }
    },
    async release(token, donePeriod) {
      await docs.update(SWEEP_LOCK_ID, (current) => {
        if (current?.doc.token !== token) return null;
        const done =
          donePeriod === null ? current.doc.done_period : Math.max(current.doc.done_period, donePeriod);
        return {
          ...current.doc,
          holder: null,
          token: null,
          until: deps.now().toISOString(),
          period: null,
          done_period: done,
          deleting: null,
        };
      });
    },
    async holder() {
      const lock = (await docs.get(SWEEP_LOCK_ID))?.doc;
      return lock !== undefined && lock.holder !== null && lock.until > deps.now().toISOString()
        ? lock.holder
        : null;
    },
  };
}
