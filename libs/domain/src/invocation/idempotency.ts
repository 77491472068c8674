import { createHash, randomUUID } from 'node:crypto';
import type { ErrorCategory, InvocationOutcome } from '@agent-platform/contracts';
import { StoreConflictError, StoreDuplicateError, type Store, type Versioned } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import { PlatformError } from '../errors/platform-error.ts';
import type { Clock } from '../time/clock.ts';
import { takeOver, type ToolCallEntry, type ToolCallJournal } from '../tools/tool-call-journal.ts';
import { claimJournal } from './claim-journal.ts';

/** A claimed key as stored (collection `idempotency`; id from `idempotencyRecordId`). */
export interface IdempotencyRecord {
  id: string;
  agent_id: string;
  /** Who used the key (the caller's identity): keys of different callers never meet. */
  scope: string;
  key: string;
  /** `requestHash` of the request the key was first used with; a different request is refused. */
  request_hash: string;
  /**
   * `pending`: its owner runs it; `done`: answered (`result`, or an `error` kept for the key);
   * `released`: its run failed and the key is free, the record kept only for its `tool_calls`.
   */
  state: 'pending' | 'done' | 'released';
  /**
   * The owner's claim (a UUID): only the owner's own renewals, completion and release touch the
   * record, so an owner that stalled past its lease can never overwrite the next owner's. Absent
   * on records written before leases were renewed.
   */
  token?: string;
  /** Set once done: what the first invocation answered. */
  result: InvocationOutcome | null;
  /**
   * Set once done with an error that stays the key's answer: a tool call in doubt (docs/tools.md
   * "The tool-call journal"), which no retry of the request can get past.
   */
  error?: { category: ErrorCategory; message: string; details?: Record<string, unknown> };
  /**
   * The tool-call journal of the key's invocation: its state-changing calls by position, with
   * their answers, over every run of the key, so a retry is given the recorded answers instead of
   * calling the system of record again.
   */
  tool_calls?: ToolCallEntry[];
  created_at: string;
  /** While pending: the owner's lease, renewed; past it the owner is presumed dead and the key free. */
  lease_until?: string;
  /**
   * TTL: the remembering period. (Records written before `lease_until`: a pending claim's lease,
   * then the remembering period.)
   */
  expires_at: string;
}

export const IDEMPOTENCY_COLLECTION = 'idempotency';

/** One key as a caller used it. */
export interface IdempotencyClaimRequest {
  agentId: string;
  /** The caller's identity (docs/invocation.md "Idempotency keys"). */
  scope: string;
  key: string;
  /** `requestHash` of the request. */
  requestHash: string;
}

/**
 * The first caller of a key owns it: it runs the invocation and settles the claim exactly once.
 * While it runs, the claim's lease is renewed every third of `pendingLeaseMs`, so a claim whose
 * owner was killed is free again within one lease (a retry then runs), while a live owner keeps it
 * however long the invocation takes.
 */
export interface OwnedClaim {
  kind: 'owner';
  /** Remembers the result for the TTL; later callers of the key get it as a duplicate. */
  complete(result: InvocationOutcome): Promise<void>;
  /**
   * The invocation failed: forget the key so that a retry with it executes (the record stays,
   * `released`, when it holds a tool-call journal the retry must replay).
   */
  release(): Promise<void>;
  /** The invocation ended on `error` that stays the key's answer (a tool call in doubt): every retry gets it. */
  fail(error: PlatformError): Promise<void>;
  /** The journal of the key's state-changing tool calls, as earlier runs of the key left it. */
  readonly journal: ToolCallJournal;
  /**
   * Aborts when the claim was lost while running: a renewal found it no longer ours, or could not
   * be written before the lease ran out (the store unreachable). The owner must stop, since another
   * caller may now own the key: that is what keeps one key from executing twice.
   */
  readonly lost: AbortSignal;
}

export interface DuplicateClaim {
  kind: 'duplicate';
  result: InvocationOutcome;
}

export interface IdempotencyKeys {
  /**
   * Claims the key. A key already done answers its result (or rejects with the error kept for
   * it); a key used for a different request (another `requestHash`) is `Conflict`, never the
   * result. A key still pending (its owner is running) is waited for, up to `waitMs`, without
   * writing: the waiter wakes when the owner settles (`settled`, a notification from whichever
   * process owned it) or, should that be lost, re-reads the record every `recheckMs`. If the owner
   * failed meanwhile, or its lease lapsed (it died), this caller takes the key over, with the
   * journal of its tool calls, and runs (a failed invocation is not remembered). Waiting longer
   * than `waitMs` is `Timeout`; an aborted `signal` rejects with its reason.
   */
  claim(request: IdempotencyClaimRequest, options: { waitMs: number; signal?: AbortSignal }): Promise<OwnedClaim | DuplicateClaim>;
  /** The record `id` was settled (done or released) somewhere: wakes this process's waiters on it. */
  settled(id: string): void;
}

export interface IdempotencyDeps {
  store: Store;
  clock: Clock;
  /** How long a finished key is remembered ([agents] idempotency_ttl_hours, at least 24). */
  ttlHours: () => number;
  /**
   * How long a pending claim holds the key without a renewal: past it, the owner is presumed
   * dead (a killed worker) and the key is free again. The owner renews every third of it.
   */
  pendingLeaseMs: () => number;
  /** Tells every process that a record was settled (the agent worker notifies `agents.idempotency.settled`). */
  announce?: (id: string) => void;
  /** How often a waiter re-reads the record when no notification came; default 1 s. */
  recheckMs?: number;
}

const HOUR_MS = 3_600_000;

/** The store id of a key: per agent, and per caller through a hash (keys and scopes may hold ':'). */
export function idempotencyRecordId(agentId: string, scope: string, key: string): string {
  return `${agentId}:${createHash('sha256').update(JSON.stringify([scope, key])).digest('hex')}`;
}

/**
 * What a key is bound to: the message, the source and the workflow type (what the invocation
 * runs and bills). `correlation_id` is left out: it traces a call, and a retry may carry a new one.
 */
export function requestHash(request: { message: string; source: unknown; workflow_type?: string | undefined }): string {
  const canonical = JSON.stringify([request.message, canonicalJson(request.source), request.workflow_type ?? null]);
  return `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

function canonicalJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalJson);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.map(([k, v]) => [k, canonicalJson(v)]);
}

/**
 * Durable idempotency keys in the shared store, so a repeat is recognised by any api node or
 * worker and across restarts. The claim is one `insert` (unique id), so of any number of
 * concurrent callers exactly one owns the key; everyone else only reads.
 */
export function createIdempotencyKeys(deps: IdempotencyDeps): IdempotencyKeys {
  const records = deps.store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' });
  const recheckMs = deps.recheckMs ?? 1_000;
  const waiters = new Map<string, Set<() => void>>();
  const at = (offsetMs: number): string => new Date(deps.clock.now().getTime() + offsetMs).toISOString();

  const announce = (id: string): void => {
    wake(id);
    deps.announce?.(id);
  };

  function wake(id: string): void {
    for (const wakeUp of [...(waiters.get(id) ?? [])]) wakeUp();
  }

  /** Resolves on a wake-up for `id` or after `ms`; rejects when `signal` aborts. */
  function nextLook(id: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason as Error);
        return;
      }
      let set = waiters.get(id);
      if (set === undefined) waiters.set(id, (set = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        set.delete(wakeUp);
        if (set.size === 0 && waiters.get(id) === set) waiters.delete(id);
      };
      const wakeUp = (): void => {
        done();
        resolve();
      };
      const onAbort = (): void => {
        done();
        reject(signal.reason as Error);
      };
      const timer = setTimeout(wakeUp, ms);
      set.add(wakeUp);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  const tryInsert = async (request: IdempotencyClaimRequest, id: string): Promise<OwnedClaim | null> => {
    const token = randomUUID();
    const pending: IdempotencyRecord = {
      id,
      agent_id: request.agentId,
      scope: request.scope,
      key: request.key,
      request_hash: request.requestHash,
      state: 'pending',
      token,
      result: null,
      created_at: at(0),
      lease_until: at(deps.pendingLeaseMs()),
      expires_at: at(deps.ttlHours() * HOUR_MS),
    };
    try {
      await records.insert(pending);
    } catch (error) {
      if (error instanceof StoreDuplicateError) return null;
      throw error;
    }
    return owned(id, token, [], []);
  };

  /**
   * Takes over a key whose owner failed (`released`) or died (its lease lapsed), keeping the
   * journal of its tool calls: the calls it left `started` are `unknown` now. Null when another
   * writer got there first (a renewal, another taker): the caller looks again.
   */
  const tryTakeOver = async (existing: Versioned<IdempotencyRecord>): Promise<OwnedClaim | null> => {
    const token = randomUUID();
    const { journal, lapsed } = takeOver(existing.doc.tool_calls ?? []);
    const taken: IdempotencyRecord = {
      ...existing.doc,
      state: 'pending',
      token,
      result: null,
      lease_until: at(deps.pendingLeaseMs()),
      expires_at: at(deps.ttlHours() * HOUR_MS),
      ...(journal.length === 0 ? {} : { tool_calls: journal }),
    };
    try {
      await records.replace(taken, existing.version);
    } catch (error) {
      if (error instanceof StoreConflictError) return null;
      throw error;
    }
    return owned(existing.doc.id, token, journal, lapsed);
  };

  function owned(id: string, token: string, prior: ToolCallEntry[], lapsed: ToolCallEntry[]): OwnedClaim {
    const lease = keepLeased(id, token);
    let settled: Promise<void> | null = null;
    const settle = (write: () => Promise<unknown>): Promise<void> =>
      (settled ??= (async () => {
        lease.stop();
        await write();
        announce(id);
      })());
    const remember = (change: Partial<IdempotencyRecord>) =>
      settle(() => writeIfOurs(id, token, (doc) => ({ ...doc, state: 'done', ...change, expires_at: at(deps.ttlHours() * HOUR_MS) })));
    return {
      kind: 'owner',
      lost: lease.lost,
      complete: (result) => remember({ result }),
      fail: (error) => remember({ result: null, error: error.toJSON() }),
      release: () => settle(() => releaseIfOurs(id, token)),
      journal: claimJournal(
        { prior, lapsed, id },
        (change) => writeIfOurs(id, token, (doc) => ({ ...doc, tool_calls: change(doc.tool_calls ?? []) })),
      ),
    };
  }

  /** Renews the claim's lease every third of it until stopped; `lost` aborts if that fails. */
  function keepLeased(id: string, token: string): { lost: AbortSignal; stop: () => void } {
    const controller = new AbortController();
    let renewedUntil = deps.clock.now().getTime() + deps.pendingLeaseMs();
    const timer = setInterval(() => {
      writeIfOurs(id, token, (doc) => ({ ...doc, lease_until: at(deps.pendingLeaseMs()) })).then(
        (ours) => {
          if (ours) renewedUntil = deps.clock.now().getTime() + deps.pendingLeaseMs();
          else lose('its idempotency claim was taken over (this worker stalled past its lease)');
        },
        () => {
          if (deps.clock.now().getTime() >= renewedUntil) lose('its idempotency claim could not be renewed before its lease ran out (the store is unreachable)');
        },
      );
    }, Math.max(50, Math.floor(deps.pendingLeaseMs() / 3)));
    timer.unref();
    const lose = (why: string): void => {
      clearInterval(timer);
      controller.abort(Errors.unavailable(`the invocation was stopped: ${why}`));
    };
    return { lost: controller.signal, stop: () => clearInterval(timer) };
  }

  /** Rewrites the record only while it is still this claim's pending one; false when it is not. */
  async function writeIfOurs(id: string, token: string, change: (doc: IdempotencyRecord) => IdempotencyRecord): Promise<boolean> {
    let ours = false;
    await records.update(id, (current) => {
      ours = current !== null && current.doc.state === 'pending' && current.doc.token === token;
      return ours && current !== null ? change(current.doc) : null;
    });
    return ours;
  }

  /** Frees the key: the record goes, unless it keeps a tool-call journal for the next run of the key. */
  async function releaseIfOurs(id: string, token: string): Promise<void> {
    // A renewal of our own still landing can move the version: read again and retry.
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await records.get(id);
      if (current === null || current.doc.state !== 'pending' || current.doc.token !== token) return;
      try {
        if ((current.doc.tool_calls ?? []).length > 0) {
          const { token: _owner, lease_until: _lease, ...kept } = current.doc;
          await records.replace({ ...kept, state: 'released' }, current.version);
          return;
        }
        await records.delete(id, current.version);
        return;
      } catch (error) {
        if (!(error instanceof StoreConflictError)) throw error;
      }
    }
  }

  /** A pending record whose owner stopped renewing (records before `lease_until` simply vanish with their TTL). */
  const leaseLapsed = (doc: IdempotencyRecord): boolean =>
    doc.state === 'pending' && doc.lease_until !== undefined && Date.parse(doc.lease_until) <= deps.clock.now().getTime();

  return {
    async claim(request, options) {
      const id = idempotencyRecordId(request.agentId, request.scope, request.key);
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(), options.waitMs);
      const signal = options.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, options.signal]);
      try {
        for (;;) {
          const owned = await tryInsert(request, id);
          if (owned !== null) return owned;
          const existing = await records.get(id);
          // Released between the insert and the read: try to claim it again at once.
          if (existing === null) continue;
          if (existing.doc.request_hash !== request.requestHash) throw Errors.idempotencyKeyReused(request.key);
          if (existing.doc.state === 'done' && existing.doc.result !== null) return { kind: 'duplicate', result: existing.doc.result };
          const kept = existing.doc.error;
          if (existing.doc.state === 'done' && kept !== undefined) throw new PlatformError(kept.category, kept.message, kept.details === undefined ? {} : { details: kept.details });
          if (existing.doc.state === 'released' || leaseLapsed(existing.doc)) {
            const taken = await tryTakeOver(existing);
            if (taken !== null) return taken;
            continue;
          }
          await nextLook(id, recheckMs, signal).catch((error: unknown) => {
            if (!deadline.signal.aborted || options.signal?.aborted === true) throw error;
          });
          if (deadline.signal.aborted) break;
        }
      } finally {
        clearTimeout(timer);
      }
      throw Errors.timeout(
        `an invocation with idempotency key '${request.key}' is still running after ${Math.round(options.waitMs / 1000)} s; retry with the same key later`,
      );
    },
    settled: wake,
  };
}
