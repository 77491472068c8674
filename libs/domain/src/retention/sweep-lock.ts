import { randomUUID } from 'node:crypto';
import type { Store } from '@agent-platform/store';
import { RETENTION_STATE_COLLECTION } from './sweep-audit.ts';

export const SWEEP_LOCK_ID = 'sweep-lock';

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
}

export interface SweepClaim {
  token: string;
  /** The holder whose lease had lapsed when this claim took over (a killed sweep), or null. */
  tookOverFrom: string | null;
}

/**
 * The lock of the retention sweep (one document in `retention_state`): one sweep at a time across
 * every process sharing the store, each schedule period swept once, and a sweep whose process died
 * (SIGKILL) taken over by another once its lease lapses, in the same period.
 */
export interface SweepLock {
  /** Claims the sweep of `period` (null: a manual sweep, any time); null when done or held by a live holder. */
  claim(period: number | null): Promise<SweepClaim | null>;
  /** Extends the lease; false when another process took the lock over. */
  renew(token: string): Promise<boolean>;
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
        return { ...lock, holder: deps.node, token, until: until(), period };
      });
      return after?.doc.token === token ? { token, tookOverFrom } : null;
    },
    async renew(token) {
      const after = await docs.update(SWEEP_LOCK_ID, (current) =>
        current?.doc.token === token ? { ...current.doc, until: until() } : null,
      );
      return after?.doc.token === token;
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
