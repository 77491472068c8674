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
} from '@agent-platform/contracts';
import { BusError, type Bus, type Subscription } from '@agent-platform/bus';
import { withCorrelation, type Logger } from '@agent-platform/observability';
import { assertMessageWithin, Errors, PlatformError } from '@agent-platform/domain';
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
}

/**
 * Waited for beyond `[agents] invocation_timeout_secs`, so that the worker's own Timeout (which
 * also settles the stats, the key and the licence transaction) arrives before the bus gives up.
 */
const BUS_GRACE_SECS = 5;

const CATEGORIES = new Set<string>(ERROR_CATEGORIES);

export function createAgentInvoker(deps: Pick<ApiDeps, 'bus' | 'config' | 'logger'>): AgentInvoker {
  const workers = createWorkerWatch(deps.bus);
  const cancel = (invocationId: string, reason = 'the client closed the connection'): void => {
    const message: AgentCancelMessage = { invocation_id: invocationId, reason };
    deps.bus.notify(Subjects.agentCancel, message).catch((err: unknown) => {
      deps.logger.warn({ err, invocation_id: invocationId }, 'could not send the cancel of an abandoned invocation');
    });
  };

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
      const limitSecs = Math.min(deps.config.current().agents.invocation_timeout_secs, (options.timeoutMs ?? Number.POSITIVE_INFINITY) / 1000);
      const timeoutSecs = limitSecs + BUS_GRACE_SECS;
      const invocationId = randomUUID();
      let stream: Subscription | null = null;
      let payload: AgentInvokeRequest = {
        ...request,
        invocation_id: invocationId,
        progress_subject: workers.subject,
        ...(options.timeoutMs === undefined ? {} : { timeout_ms: options.timeoutMs }),
      };
      const { onToken, signal } = options;
      if (onToken !== undefined) {
        // Listening before the request is sent: no token can arrive before someone hears it.
        const subject = Subjects.agentStream(randomUUID());
        stream = await deps.bus.listen<AgentStreamToken>(subject, (message) => onToken(message.token));
        payload = { ...payload, stream_subject: subject };
      }
      const onAbort = (): void => cancel(invocationId);
      signal?.addEventListener('abort', onAbort, { once: true });
      // A worker silent for a few seconds is gone: answer at once rather than at the timeout, and
      // cancel in case it is only stalled, so it cannot finish the invocation behind our back.
      const lost = new AbortController();
      const stopWatching = await workers.watch(invocationId, () => {
        lost.abort();
        cancel(invocationId, 'its agent worker stopped answering');
      });
      try {
        if (signal?.aborted === true) throw Errors.invocationCancelled('the client closed the connection');
        // The invocation's correlation id on the request's span and on every span it causes
        // (it may be the caller's own, on POST /agents/{id}/invoke); a no-op while tracing is off.
        return await withCorrelation(request.correlation_id, () =>
          deps.bus.request<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, payload, {
            timeoutMs: timeoutSecs * 1000,
            signal: signal === undefined ? lost.signal : AbortSignal.any([signal, lost.signal]),
          }),
        );
      } catch (error) {
        if (lost.signal.aborted && signal?.aborted !== true) throw Errors.workerLost(invocationId, WORKER_LOST_AFTER_MS);
        throw fromBusError(error, timeoutSecs);
      } finally {
        stopWatching();
        signal?.removeEventListener('abort', onAbort);
        await stream?.drain();
      }
    },
  };
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
