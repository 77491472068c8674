import {
  INVOKE_HEARTBEAT_MS,
  isAgentInvokeRequest,
  type AgentInvokeProgress,
  type AgentInvokeReply,
  type AgentStreamToken,
  type InvocationOutcome,
} from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { Errors, type InvocationOptions, type InvocationService } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { InvocationSlots } from '../invocation-slots.ts';

export interface InvokeHandlerDeps {
  bus: Bus;
  invocation: InvocationService;
  logger: Logger;
  /** This worker's invocation slots (`[agents] worker_concurrency`). */
  slots: InvocationSlots;
}

/**
 * `agents.invoke`: runs one invocation and replies `{result, duplicate}`. A thrown PlatformError
 * reaches the caller as a `BusError('remote')` carrying its category, message and details, which
 * the api turns back into the same error. With `stream_subject`, each piece of reply text is
 * notified there as it arrives; the notifications are sent before the reply, in order.
 *
 * The invocation takes one of this worker's slots once its idempotency key is claimed (a repeat
 * waiting for the key's owner holds none); when every slot is taken it waits in arrival order,
 * within the invocation timeout counted from its arrival. Its reply must fit the bus: a result
 * too large is refused before the licence is charged or the key remembered (bus.ts "Size").
 */
export function invokeHandler(deps: InvokeHandlerDeps) {
  return async (payload: unknown): Promise<AgentInvokeReply> => {
    if (!isAgentInvokeRequest(payload)) throw Errors.validation('agents.invoke: the request does not match AgentInvokeRequest');
    const { stream_subject: streamSubject, timeout_ms: timeoutMs, progress_subject: progressSubject, ...request } = payload;
    const stopHeartbeat = progressSubject === undefined || request.invocation_id === undefined ? () => undefined : heartbeat(deps, progressSubject, request.invocation_id);
    const options: InvocationOptions = {
      acquireSlot: (signal) => deps.slots.acquire(signal),
      checkDeliverable: (result) => assertDeliverable(deps.bus, result),
      ...(timeoutMs === undefined ? {} : { timeoutSecs: timeoutMs / 1000 }),
    };
    if (streamSubject !== undefined) {
      options.onToken = (token: string): void => {
        deps.bus.notify<AgentStreamToken>(streamSubject, { token }).catch((err: unknown) => {
          deps.logger.warn({ err, subject: streamSubject }, 'could not forward a streamed token');
        });
      };
    }
    try {
      return await deps.invocation.execute(request, options);
    } finally {
      stopHeartbeat();
    }
  };
}

/**
 * Tells the requester this worker took the invocation, then that it is alive every second until
 * the answer goes out: a requester that hears nothing for a few seconds knows the worker is gone
 * (docs/invocation.md "A worker that dies"). Best effort: a lost heartbeat is only a late one.
 */
function heartbeat(deps: InvokeHandlerDeps, subject: string, invocationId: string): () => void {
  const say = (kind: AgentInvokeProgress['kind']): void => {
    deps.bus.notify<AgentInvokeProgress>(subject, { invocation_id: invocationId, kind }).catch((err: unknown) => {
      deps.logger.warn({ err, subject }, 'could not send an invocation heartbeat');
    });
  };
  say('accepted');
  const timer = setInterval(() => say('alive'), INVOKE_HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The reply `{result, duplicate}` as the bus will encode it must fit its maximum payload. */
function assertDeliverable(bus: Bus, result: InvocationOutcome): void {
  const reply: AgentInvokeReply = { result, duplicate: false };
  const bytes = Buffer.byteLength(JSON.stringify(reply));
  const max = bus.maxPayloadBytes();
  if (bytes > max) throw Errors.replyTooLarge(bytes, max);
}
