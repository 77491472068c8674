import { randomUUID } from 'node:crypto';
import {
  ERROR_CATEGORIES,
  Subjects,
  type AgentInvokeReply,
  type AgentInvokeRequest,
  type AgentStreamToken,
  type ErrorCategory,
} from '@agent-platform/contracts';
import { BusError, type Subscription } from '@agent-platform/bus';
import { Errors, PlatformError } from '@agent-platform/domain';
import type { ApiDeps } from '../deps.ts';

/**
 * The api's side of an invocation: a request on `agents.invoke` to whichever agent worker takes
 * it (the api runs no agent itself), with streamed text listened for on a subject of its own.
 */
export interface AgentInvoker {
  invoke(request: Omit<AgentInvokeRequest, 'stream_subject'>, options?: { signal?: AbortSignal; onToken?: (text: string) => void }): Promise<AgentInvokeReply>;
}

/**
 * Waited for beyond `[agents] invocation_timeout_secs`, so that the worker's own Timeout (which
 * also settles the stats, the key and the licence transaction) arrives before the bus gives up.
 */
const BUS_GRACE_SECS = 5;

const CATEGORIES = new Set<string>(ERROR_CATEGORIES);

export function createAgentInvoker(deps: Pick<ApiDeps, 'bus' | 'config'>): AgentInvoker {
  return {
    async invoke(request, options = {}) {
      const timeoutSecs = deps.config.current().agents.invocation_timeout_secs + BUS_GRACE_SECS;
      let stream: Subscription | null = null;
      let payload: AgentInvokeRequest = request;
      const { onToken } = options;
      if (onToken !== undefined) {
        // Listening before the request is sent: no token can arrive before someone hears it.
        const subject = Subjects.agentStream(randomUUID());
        stream = await deps.bus.listen<AgentStreamToken>(subject, (message) => onToken(message.token));
        payload = { ...request, stream_subject: subject };
      }
      try {
        return await deps.bus.request<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, payload, {
          timeoutMs: timeoutSecs * 1000,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        });
      } catch (error) {
        throw fromBusError(error, timeoutSecs);
      } finally {
        await stream?.drain();
      }
    },
  };
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
    default:
      return Errors.unavailable('the message bus', error);
  }
}
