import type { InvocationOutcome } from '@agent-platform/contracts';
import { StoreConflictError, StoreDuplicateError, type CounterOnce, type Store, type Versioned } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { PlatformError } from '../errors/platform-error.ts';
import type { ToolCallJournal } from '../tools/tool-call-journal.ts';

/**
 * The fence of an invocation whose requester may give up on it and send it again (the api, when it
 * presumes the worker lost; docs/invocation.md "A worker that dies"): one document per invocation
 * id, in which the worker and the requester each move the invocation on, never over the other.
 *
 * Written by the worker only when there is something to protect, so a plain send (no workflow
 * type, no state-changing tool call) writes nothing:
 * - `reserved`: it holds a licence transaction (`counter`), taken with its reservation;
 * - `calling`: its first state-changing tool call is about to be made (`tool`, `idempotency_key`);
 * - `committed`: its answer is charged (`result`): a requester that lost the worker answers it;
 * - `released`: it failed and gave its transaction back.
 *
 * The requester, when it presumes the worker lost, moves it to `abandoned` (inserting the document
 * when there is none): from then on the worker can neither start a state-changing call nor commit.
 * Whichever side writes first decides. The documents expire after a day.
 *
 * The licence transaction is reserved under the invocation's hold (`invocationHold`, an idempotent
 * counter add) BEFORE the fence can say so: a worker killed between the two leaves a transaction
 * nobody else knows of. So the requester that abandons withdraws the hold whatever the fence says
 * (`Counters.withdraw`): the transaction comes back if it was taken, is never taken if it was not,
 * and comes back once however the worker and the requester race (the worker's own release is the
 * same withdrawal). A fence without `hold` was written by a worker of an earlier release: its
 * transaction is given back directly (`released: true`), as before.
 */
export interface InvocationFenceDoc {
  /** The invocation id. */
  id: string;
  state: 'reserved' | 'calling' | 'committed' | 'released' | 'abandoned';
  /** The licence transaction counter the worker reserved, if any. */
  counter?: string;
  /** The transaction was reserved under the invocation's hold (`invocationHold`): the requester withdraws it. */
  hold?: true;
  /** `abandoned`: the requester gave the reserved transaction back. */
  released?: boolean;
  /** The worker that started the state-changing call, the tool and the call's idempotency key. */
  worker?: string;
  tool?: string;
  idempotency_key?: string;
  /** `committed`: the answer, charged. */
  result?: InvocationOutcome;
  at: string;
  expires_at: string;
}

export const INVOCATION_FENCES_COLLECTION = 'invocation_fences';
const FENCE_TTL_MS = 24 * 3_600_000;

/**
 * The hold under which a worker reserves the licence transaction of an invocation its requester
 * may abandon (LicenceRequest.hold): remembered as long as the fence, longer than any invocation.
 */
export function invocationHold(invocationId: string, now: Date): CounterOnce {
  return { id: `invocation:${invocationId}`, until: new Date(now.getTime() + FENCE_TTL_MS).toISOString() };
}

/** The requester's verdict on an invocation whose worker it lost. */
export type AbandonOutcome =
  /** Nothing state-changing was started and nothing charged: it may be sent again. */
  | { kind: 'abandoned' }
  /** A state-changing call was started: it may have taken effect (the fence names it). */
  | { kind: 'in_doubt'; fence: InvocationFenceDoc }
  /** The worker committed its answer before it was lost: that is the answer. */
  | { kind: 'committed'; result: InvocationOutcome };

/** The worker's side, one per invocation: each step is a no-op until something had to be written. */
export interface InvocationFence {
  /** A licence transaction was reserved under `counter`. Rejects (abandoned) when the requester got there first. */
  reserved(counter: string): Promise<void>;
  /** The first state-changing call is about to be made. Rejects (abandoned): the call must not be made. */
  calling(call: { worker: string; tool: string; idempotency_key: string }): Promise<void>;
  /** Right before the charge: records the answer. Rejects (abandoned): nothing may be charged or answered. */
  committing(result: InvocationOutcome): Promise<void>;
  /**
   * The invocation failed: `release` (give the transaction back, as usual) or `disown` (the
   * requester abandoned it and already gave it back).
   */
  releasing(): Promise<'release' | 'disown'>;
}

export interface InvocationFences {
  /** The worker's fence of `invocationId`. */
  of(invocationId: string): InvocationFence;
  /** Requester: the worker of `invocationId` is presumed lost; fences it off and says what it had done. */
  abandon(invocationId: string): Promise<AbandonOutcome>;
}

export function invocationFences(store: Store, now: () => Date = () => new Date()): InvocationFences {
  const fences = store.collection<InvocationFenceDoc>(INVOCATION_FENCES_COLLECTION, { ttlField: 'expires_at' });
  const stamp = (): { at: string; expires_at: string } => {
    const at = now();
    return { at: at.toISOString(), expires_at: new Date(at.getTime() + FENCE_TTL_MS).toISOString() };
  };

  /** Moves the document on (`change` returns the next one, or throws); false when it is absent. */
  async function move(id: string, change: (doc: InvocationFenceDoc) => InvocationFenceDoc | null): Promise<InvocationFenceDoc | null> {
    let seen: InvocationFenceDoc | null = null;
    await fences.update(id, (current) => {
      seen = current?.doc ?? null;
      return current === null ? null : change(current.doc);
    });
    return seen;
  }

  return {
    of(invocationId) {
      let written = false;
      const abandoned = (what: string): PlatformError => invocationAbandoned(invocationId, what);
      const insert = async (doc: Omit<InvocationFenceDoc, 'id' | 'at' | 'expires_at'>, what: string): Promise<void> => {
        try {
          await fences.insert({ id: invocationId, ...doc, ...stamp() });
          written = true;
        } catch (error) {
          if (error instanceof StoreDuplicateError) throw abandoned(what);
          throw error;
        }
      };
      return {
        reserved: (counter) => insert({ state: 'reserved', counter, hold: true }, 'nothing was charged'),
        async calling(call) {
          if (!written) return insert({ state: 'calling', ...call }, `'${call.tool}' was not called`);
          await move(invocationId, (doc) => {
            if (doc.state === 'abandoned') throw abandoned(`'${call.tool}' was not called`);
            return doc.state === 'reserved' ? { ...doc, state: 'calling', ...call } : null;
          });
        },
        async committing(result) {
          if (!written) return;
          await move(invocationId, (doc) => {
            if (doc.state === 'abandoned') throw abandoned('nothing was charged');
            return { ...doc, state: 'committed', result };
          });
        },
        async releasing() {
          if (!written) return 'release';
          let how: 'release' | 'disown' = 'release';
          await move(invocationId, (doc) => {
            if (doc.state === 'abandoned') {
              if (doc.released === true) how = 'disown';
              return null;
            }
            return { ...doc, state: 'released' };
          });
          return how;
        },
      };
    },

    async abandon(invocationId) {
      const outcome = await fenceOff(invocationId);
      // Whatever the fence says, the worker may hold a transaction it had no time to record (it
      // reserves before it writes the fence): withdrawn under the hold, once, or never taken.
      if (outcome.kind !== 'committed') await store.counters.withdraw(invocationHold(invocationId, now()));
      return outcome;
    },
  };

  /** Moves the fence to `abandoned` (inserting it when absent) unless the worker committed. */
  async function fenceOff(invocationId: string): Promise<AbandonOutcome> {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        await fences.insert({ id: invocationId, state: 'abandoned', ...stamp() });
        return { kind: 'abandoned' };
      } catch (error) {
        if (!(error instanceof StoreDuplicateError)) throw error;
      }
      const current = await fences.get(invocationId);
      if (current === null) continue;
      const { doc } = current;
      if (doc.state === 'committed' && doc.result !== undefined) return { kind: 'committed', result: doc.result };
      if (doc.state === 'abandoned') return doc.tool === undefined ? { kind: 'abandoned' } : { kind: 'in_doubt', fence: doc };
      if (!(await takeOver(current))) continue;
      return doc.tool === undefined ? { kind: 'abandoned' } : { kind: 'in_doubt', fence: doc };
    }
    throw Errors.unavailable(`the fence of invocation ${invocationId} kept changing`);
  }

  /**
   * `reserved`, `calling` or `released` -> `abandoned`. A fence of an earlier release's worker
   * (no `hold`) that still held its transaction has it given back here, directly.
   */
  async function takeOver(current: Versioned<InvocationFenceDoc>): Promise<boolean> {
    const { doc } = current;
    const holds = doc.counter !== undefined && doc.hold !== true && doc.state !== 'released';
    try {
      await fences.replace({ ...doc, state: 'abandoned', ...(holds ? { released: true } : {}) }, current.version);
    } catch (error) {
      if (error instanceof StoreConflictError) return false;
      throw error;
    }
    if (holds) await store.counters.add(doc.counter!, -1);
    return true;
  }
}

/** The invocation's requester gave up on it (its worker was presumed lost, or the client went away). */
export function invocationAbandoned(invocationId: string, what: string): PlatformError {
  return Errors.invocationCancelled(`invocation ${invocationId} was abandoned by its requester (presumed lost and sent again): ${what}`);
}

/**
 * The journal of an invocation without an idempotency key whose requester may abandon it: like
 * `transientJournal` (nothing is kept, calls are only numbered), except that the first
 * state-changing call first moves the invocation's fence to `calling`. When the requester got
 * there first the write rejects, so the call is not made and the invocation stops (nothing charged).
 */
export function fencedJournal(base: ToolCallJournal, fence: InvocationFence, worker: string): ToolCallJournal {
  let fenced: Promise<void> | null = null;
  return {
    ...base,
    async write(entry) {
      if (entry.state === 'started') {
        fenced ??= fence.calling({ worker, tool: entry.tool, idempotency_key: entry.idempotency_key });
        await fenced;
      }
      await base.write(entry);
    },
  };
}
