import { isAgentInvokeRequest, type AgentInvokeReply, type AgentStreamToken } from '@agent-platform/contracts';
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
  /** `[agents] invocation_timeout_secs` of the running config. */
  timeoutSecs: () => number;
}

/**
 * `agents.invoke`: runs one invocation and replies `{result, duplicate}`. A thrown PlatformError
 * reaches the caller as a `BusError('remote')` carrying its category, message and details, which
 * the api turns back into the same error. With `stream_subject`, each piece of reply text is
 * notified there as it arrives; the notifications are sent before the reply, in order.
 *
 * When every slot of this worker is taken the invocation waits for one, in arrival order. The
 * invocation timeout then counts from its arrival, not from the start of its run: the api waits
 * `invocation_timeout_secs` plus a grace for the reply, so a worker must answer Timeout (and run
 * nothing after it) before the api gives up, however long the line was.
 */
export function invokeHandler(deps: InvokeHandlerDeps) {
  return async (payload: unknown): Promise<AgentInvokeReply> => {
    if (!isAgentInvokeRequest(payload)) throw Errors.validation('agents.invoke: the request does not match AgentInvokeRequest');
    const { stream_subject: streamSubject, ...request } = payload;
    const options: InvocationOptions = {};
    if (streamSubject !== undefined) {
      options.onToken = (token: string): void => {
        deps.bus.notify<AgentStreamToken>(streamSubject, { token }).catch((err: unknown) => {
          deps.logger.warn({ err, subject: streamSubject }, 'could not forward a streamed token');
        });
      };
    }
    const release = deps.slots.tryAcquire();
    if (release !== null) {
      try {
        return await deps.invocation.execute(request, options);
      } finally {
        release();
      }
    }
    return runAfterWaiting(deps, request.agent_id, (signal) => deps.invocation.execute(request, { ...options, signal }));
  };
}

async function runAfterWaiting(
  deps: InvokeHandlerDeps,
  agentId: string,
  run: (signal: AbortSignal) => Promise<AgentInvokeReply>,
): Promise<AgentInvokeReply> {
  const timeoutSecs = deps.timeoutSecs();
  const arrived = Date.now();
  let started: number | null = null;
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    const waitedSecs = (((started ?? Date.now()) - arrived) / 1000).toFixed(1);
    deadline.abort(
      Errors.timeout(
        `invocation of agent '${agentId}' exceeded ${timeoutSecs} s ([agents] invocation_timeout_secs), ` +
          `${waitedSecs} s of it waiting for a free slot on a busy agent worker ([agents] worker_concurrency)`,
      ),
    );
  }, timeoutSecs * 1000);
  try {
    const release = await deps.slots.acquire(deadline.signal);
    started = Date.now();
    try {
      return await run(deadline.signal);
    } finally {
      release();
    }
  } finally {
    clearTimeout(timer);
  }
}
