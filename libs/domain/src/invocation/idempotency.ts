import { setTimeout as delay } from 'node:timers/promises';
import type { InvocationOutcome } from '@agent-platform/contracts';
import { StoreDuplicateError, type Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';

/** A claimed key as stored (collection `idempotency`, id `<agent_id>:<key>`). */
export interface IdempotencyRecord {
  id: string;
  agent_id: string;
  key: string;
  state: 'pending' | 'done';
  /** Set once done: what the first invocation answered. */
  result: InvocationOutcome | null;
  created_at: string;
  /** TTL: a pending claim's lease, then (once done) the remembering period. */
  expires_at: string;
}

export const IDEMPOTENCY_COLLECTION = 'idempotency';

/** The first caller of a key owns it: it runs the invocation and settles the claim exactly once. */
export interface OwnedClaim {
  kind: 'owner';
  /** Remembers the result for the TTL; later callers of the key get it as a duplicate. */
  complete(result: InvocationOutcome): Promise<void>;
  /** The invocation failed: forget the key so that a retry with it executes. */
  release(): Promise<void>;
}

export interface DuplicateClaim {
  kind: 'duplicate';
  result: InvocationOutcome;
}

export interface IdempotencyKeys {
  /**
   * Claims `key` for the agent. A key already done answers its result. A key still pending (its
   * owner is running) is waited for, polling, up to `waitMs`; if the owner fails meanwhile, its
   * release frees the key and this caller claims it and runs (a failed invocation is not
   * remembered). Waiting longer than `waitMs` is `Timeout`.
   */
  claim(agentId: string, key: string, options: { waitMs: number; signal?: AbortSignal }): Promise<OwnedClaim | DuplicateClaim>;
}

export interface IdempotencyDeps {
  store: Store;
  clock: Clock;
  /** How long a finished key is remembered ([agents] idempotency_ttl_hours, at least 24). */
  ttlHours: () => number;
  /**
   * How long a pending claim holds the key without finishing: past it, the owner is presumed
   * dead (a crashed worker) and the key is free again. The invocation timeout plus a margin.
   */
  pendingLeaseMs: () => number;
  /** Poll interval while waiting for an owner; default 20 ms. */
  pollMs?: number;
}

const HOUR_MS = 3_600_000;

/**
 * Durable, per-agent idempotency keys in the shared store, so a repeat is recognised by any api
 * node or worker and across restarts. The claim is one `insert` (unique id), so of any number of
 * concurrent callers exactly one owns the key.
 */
export function createIdempotencyKeys(deps: IdempotencyDeps): IdempotencyKeys {
  const records = deps.store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' });
  const pollMs = deps.pollMs ?? 20;
  const at = (offsetMs: number): string => new Date(deps.clock.now().getTime() + offsetMs).toISOString();

  const tryInsert = async (agentId: string, key: string): Promise<OwnedClaim | null> => {
    const id = `${agentId}:${key}`;
    const pending: IdempotencyRecord = {
      id,
      agent_id: agentId,
      key,
      state: 'pending',
      result: null,
      created_at: at(0),
      expires_at: at(deps.pendingLeaseMs()),
    };
    try {
      await records.insert(pending);
    } catch (error) {
      if (error instanceof StoreDuplicateError) return null;
      throw error;
    }
    let settled: Promise<void> | null = null;
    return {
      kind: 'owner',
      complete: (result) =>
        (settled ??= records
          .upsert({ ...pending, state: 'done', result, expires_at: at(deps.ttlHours() * HOUR_MS) })
          .then(() => undefined)),
      release: () => (settled ??= records.delete(id).then(() => undefined)),
    };
  };

  return {
    async claim(agentId, key, options) {
      const attempts = Math.max(1, Math.ceil(options.waitMs / pollMs));
      for (let attempt = 0; attempt < attempts; attempt++) {
        const owned = await tryInsert(agentId, key);
        if (owned !== null) return owned;
        const existing = await records.get(`${agentId}:${key}`);
        if (existing?.doc.state === 'done' && existing.doc.result !== null) return { kind: 'duplicate', result: existing.doc.result };
        // Pending elsewhere, or released between the insert and the read: look again shortly.
        if (existing !== null) await delay(pollMs, undefined, options.signal ? { signal: options.signal } : {});
      }
      throw Errors.timeout(
        `an invocation with idempotency key '${key}' is still running after ${Math.round(options.waitMs / 1000)} s; retry with the same key later`,
      );
    },
  };
}
