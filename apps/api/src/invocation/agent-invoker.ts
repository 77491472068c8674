import { randomUUID } from 'node:crypto';
import {
  ERROR_CATEGORIES,
  Subjects,
  type AgentCancelMessage,
  type AgentInvokeReply,
  type AgentInvokeRequest,
  type AgentStreamToken,
  type ErrorCategory,
  type PlatformConfig,
  type RequestAuditEntry,
} from '@agent-platform/contracts';
import { BusError, type Bus, type Subscription } from '@agent-platform/bus';
import { withCorrelation, type Logger } from '@agent-platform/observability';
import { assertMessageWithin, Errors, invocationFences, PlatformError } from '@agent-platform/domain';
import type { ApiDeps } from '../deps.ts';
import { withHttpStatus } from '../http/http-status.ts';
import { createWorkerWatch, WORKER_LOST_AFTER_MS } from './worker-watch.ts';

/** What a route asks for; the invoker adds the invocation id and the stream subject. */
export type InvocationCall = Omit<AgentInvokeRequest, 'stream_subject' | 'invocation_id'>;

/**
 * The api's side of an invocation: a request on `agents.invoke` to whichever agent worker takes
 * it (the api runs no agent itself), with streamed text listened for on a subject of its own.
 */
export interface AgentInvoker {
  /**
   * 413 SizeLimitExceeded for a message over `[agents] max_message_bytes`: routes call it first,
   * before looking anything up, so an oversized message changes nothing (issue "Hardening" 1).
   */
  checkMessage(message: string): void;
  /**
   * Aborting `signal` (the client went away) stops the wait and sends `agents.cancel` for this
   * invocation: the worker running it stops the model call, and nothing is charged.
   */
  invoke(request: InvocationCall, options?: InvokeOptions): Promise<AgentInvokeReply>;
}

export interface InvokeOptions {
  signal?: AbortSignal;
  onToken?: (text: string) => void;
  /** A limit shorter than `[agents] invocation_timeout_secs` (the legacy workflow step's `timeout`). */
  timeoutMs?: number;
  /**
   * The HTTP request's audit entry as it reads on success: the worker appends it with the
   * answer's writes and replies `audited` (http/audit-hook.ts `withWorkerAudit`).
   */
  auditEntry?: RequestAuditEntry;
}

/**
 * Waited for beyond `[agents] invocation_timeout_secs`, so that the worker's own Timeout (which
 * also settles the stats, the key and the licence transaction) arrives before the bus gives up.
 */
const BUS_GRACE_SECS = 5;

/**
 * Sends after the first when its worker is lost (docs/invocation.md "A worker that dies"). Five:
 * a worker stalled or cut off from the api node stays in NATS's queue group until the server
 * drops it (a few pings: docs/scale-out.md), and a re-dispatch may land on it again meanwhile;
 * each lost send costs 3 s, and the invocation timeout bounds them all anyway.
 */
export const MAX_REDISPATCHES = 5;
/** A re-dispatch that finds no worker running waits for one this often, within the invocation's time. */
const NO_WORKER_RETRY_MS = 250;

const CATEGORIES = new Set<string>(ERROR_CATEGORIES);

type Attempt = { kind: 'answered'; reply: AgentInvokeReply } | { kind: 'lost' };

export function createAgentInvoker(deps: Pick<ApiDeps, 'bus' | 'config' | 'logger' | 'store'>): AgentInvoker {
  const workers = createWorkerWatch(deps.bus);
  const fences = invocationFences(deps.store);
  const cancel = (invocationId: string, reason = 'the client closed the connection'): void => {
    const message: AgentCancelMessage = { invocation_id: invocationId, reason };
    deps.bus.notify(Subjects.agentCancel, message).catch((err: unknown) => {
      deps.logger.warn({ err, invocation_id: invocationId }, 'could not send the cancel of an abandoned invocation');
    });
  };

  /**
   * One send of the invocation under `invocationId`, watched: `lost` when its worker fell silent
   * (then cancelled, in case it is only stalled; it neither charges nor answers once this process
   * stops acknowledging its heartbeats). A re-dispatch (`waitForWorker`) that meets no worker
   * waits for one within `timeoutMs` instead of failing at once.
   */
  async function attempt(payload: AgentInvokeRequest, invocationId: string, timeoutMs: number, waitForWorker: boolean, signal: AbortSignal | undefined): Promise<Attempt> {
    const started = performance.now();
    for (;;) {
      const lost = new AbortController();
      // Watched from each send: the time spent waiting for a worker to appear is not silence.
      const stopWatching = await workers.watch(invocationId, () => {
        lost.abort();
        cancel(invocationId, 'its agent worker stopped answering');
      });
      try {
        const reply = await deps.bus.request<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, payload, {
          timeoutMs: Math.max(1, timeoutMs - (performance.now() - started)),
          signal: signal === undefined ? lost.signal : AbortSignal.any([signal, lost.signal]),
        });
        return { kind: 'answered', reply };
      } catch (error) {
        if (lost.signal.aborted && signal?.aborted !== true) return { kind: 'lost' };
        const noWorker = error instanceof BusError && error.code === 'no_responders';
        if (!(waitForWorker && noWorker && performance.now() - started + NO_WORKER_RETRY_MS < timeoutMs - BUS_GRACE_SECS * 1000)) throw error;
      } finally {
        stopWatching();
      }
      await new Promise((resolve) => setTimeout(resolve, NO_WORKER_RETRY_MS));
      if (signal?.aborted === true) throw Errors.invocationCancelled('the client closed the connection');
    }
  }

  return {
    checkMessage(message) {
      try {
        assertMessageWithin(message, deps.config.current().agents.max_message_bytes);
      } catch (error) {
        // DECISIONS D7's 413 for what is too large to accept, as for a body over its limit.
        throw error instanceof PlatformError ? withHttpStatus(error, 413) : error;
      }
    },

    async invoke(request, options = {}) {
      const limitMs = Math.min(deps.config.current().agents.invocation_timeout_secs * 1000, options.timeoutMs ?? Number.POSITIVE_INFINITY);
      const deadline = performance.now() + limitMs;
      const { onToken, signal, auditEntry } = options;
      let streamed = false;
      let invocationId: string = randomUUID();
      let current = invocationId;
      const onAbort = (): void => cancel(current);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        for (let sent = 1; ; sent++) {
          if (signal?.aborted === true) throw Errors.invocationCancelled('the client closed the connection');
          const leftMs = sent === 1 ? limitMs : Math.floor(deadline - performance.now());
          const timeoutSecs = leftMs / 1000 + BUS_GRACE_SECS;
          let payload: AgentInvokeRequest = {
            ...request,
            invocation_id: invocationId,
            progress_subject: workers.subject,
            progress_ack: true,
            ...(auditEntry === undefined ? {} : { audit_entry: auditEntry }),
            // A re-dispatch runs within what is left of the caller's time, so the worker's own Timeout comes first.
            ...(sent > 1 ? { timeout_ms: Math.max(1, leftMs) } : options.timeoutMs === undefined ? {} : { timeout_ms: options.timeoutMs }),
          };
          let stream: Subscription | null = null;
          if (onToken !== undefined) {
            // Listening before the request is sent: no token can arrive before someone hears it.
            // One subject per send: a stalled earlier worker's text never mixes into this one's.
            const subject = Subjects.agentStream(randomUUID());
            stream = await deps.bus.listen<AgentStreamToken>(subject, (message) => {
              streamed = true;
              onToken(message.token);
            });
            payload = { ...payload, stream_subject: subject };
          }
          let outcome: Attempt;
          try {
            // The invocation's correlation id on the request's span and on every span it causes
            // (it may be the caller's own, on POST /agents/{id}/invoke); a no-op while tracing is off.
            outcome = await withCorrelation(request.correlation_id, () => attempt(payload, invocationId, timeoutSecs * 1000, sent > 1, signal));
          } catch (error) {
            throw fromBusError(error, Math.round(timeoutSecs));
          } finally {
            await stream?.drain();
          }
          if (outcome.kind === 'answered') {
            const { reply } = outcome;
            // A re-dispatch finding the key done by the lost worker: the caller's own invocation, answered.
            if (sent > 1 && reply.duplicate && reply.result.correlation_id === request.correlation_id) return { ...reply, duplicate: false };
            return reply;
          }
          const next = await redispatchable(request, invocationId, sent, deadline, streamed);
          if (typeof next !== 'string') return next;
          invocationId = next;
          current = invocationId;
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    },
  };

  /**
   * The worker of `lostId` fell silent: the id to send the invocation again under, the answer the
   * lost worker had committed, or the error the caller gets. Its fence is taken first (which gives
   * back a licence transaction it held): it can then neither start a state-changing call nor charge.
   * Not sent again past MAX_REDISPATCHES or the caller's time, once text was streamed (it cannot be
   * taken back), or, without an idempotency key, when the lost worker had started a state-changing
   * call (409: it may have taken effect). With a key, the key's journal decides on the next worker.
   */
  async function redispatchable(request: InvocationCall, lostId: string, sent: number, deadline: number, streamed: boolean): Promise<string | AgentInvokeReply> {
    const fenced = await fences.abandon(lostId).catch((err: unknown) => {
      deps.logger.warn({ err, invocation_id: lostId }, 'could not fence off an invocation whose worker was lost: it is not sent again');
      throw Errors.workerLost(lostId, WORKER_LOST_AFTER_MS);
    });
    if (fenced.kind === 'committed') {
      deps.logger.info({ invocation_id: lostId, agent_id: request.agent_id }, 'the agent worker of an invocation was lost after it committed its answer: answered from its fence');
      return { result: fenced.result, duplicate: false };
    }
    if (fenced.kind === 'in_doubt' && request.idempotency_key === undefined) throw Errors.invocationCallInDoubt(lostId, fenced.fence);
    if (sent > MAX_REDISPATCHES || streamed || deadline - performance.now() <= 0) throw Errors.workerLost(lostId, WORKER_LOST_AFTER_MS);
    const next = randomUUID();
    deps.logger.info(
      {
        invocation_id: lostId,
        next_invocation_id: next,
        attempt: sent + 1,
        agent_id: request.agent_id,
        correlation_id: request.correlation_id,
        keyed: request.idempotency_key !== undefined,
      },
      `the agent worker of an invocation stopped answering: sent again (attempt ${sent + 1} of ${MAX_REDISPATCHES + 1})`,
    );
    return next;
  }
}

/** Room left in a bus payload for the rest of an invocation request (ids, source, caller...). */
const REQUEST_OVERHEAD_BYTES = 4096;

/**
 * Warns when `[agents] max_message_bytes` lets through messages the bus cannot carry: they are
 * then refused by the bus (still 413, docs/invocation.md "Size limits") rather than by the limit.
 */
export function warnIfMessagesOutgrowTheBus(config: PlatformConfig, bus: Pick<Bus, 'maxPayloadBytes'>, logger: Logger): void {
  const limit = config.agents.max_message_bytes;
  const max = bus.maxPayloadBytes();
  if (limit + REQUEST_OVERHEAD_BYTES <= max) return;
  logger.warn(
    { max_message_bytes: limit, bus_max_payload_bytes: max },
    `[agents] max_message_bytes (${limit}) does not fit the message bus's maximum payload (${max} bytes): messages near the limit ` +
      'are refused by the bus (413). Lower max_message_bytes, or raise max_payload on nats-server.',
  );
}

/**
 * A worker's error comes back as `BusError('remote')` with the PlatformError's category, message
 * and details: it becomes that PlatformError again, so the HTTP status is the one the domain
 * meant. `RateLimited` gets its Retry-After back from `details.retry_after_secs`.
 */
export function fromBusError(error: unknown, timeoutSecs: number): unknown {
  if (!(error instanceof BusError)) return error;
  switch (error.code) {
    case 'remote': {
      const remote = error.remote;
      if (remote === undefined || !CATEGORIES.has(remote.category)) return Errors.internal('the agent worker failed', error);
      const retryAfter = remote.details?.retry_after_secs;
      return new PlatformError(remote.category as ErrorCategory, remote.message, {
        ...(remote.details === undefined ? {} : { details: remote.details }),
        ...(typeof retryAfter === 'number' ? { retryAfterSecs: retryAfter } : {}),
      });
    }
    case 'timeout':
      return Errors.timeout(`no agent worker answered within ${timeoutSecs} s`);
    case 'no_responders':
      return Errors.internal('no agent worker is running to take the invocation: start the agent-worker service (or the all-in-one platform)', error);
    case 'aborted':
      return Errors.invocationCancelled('the client closed the connection');
    case 'payload_too_large':
      // The caller's message, once wrapped for the bus, is what does not fit: 413 like a body.
      return withHttpStatus(Errors.sizeLimit(`${error.message}: send a shorter message`), 413);
    default:
      return Errors.unavailable('the message bus', error);
  }
}
