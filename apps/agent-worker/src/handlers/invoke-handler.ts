import { isAgentInvokeRequest, type AgentInvokeReply, type AgentStreamToken } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { Errors, type InvocationService } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';

/**
 * `agents.invoke`: runs one invocation and replies `{result, duplicate}`. A thrown PlatformError
 * reaches the caller as a `BusError('remote')` carrying its category, message and details, which
 * the api turns back into the same error. With `stream_subject`, each piece of reply text is
 * notified there as it arrives; the notifications are sent before the reply, in order.
 */
export function invokeHandler(deps: { bus: Bus; invocation: InvocationService; logger: Logger }) {
  return async (payload: unknown): Promise<AgentInvokeReply> => {
    if (!isAgentInvokeRequest(payload)) throw Errors.validation('agents.invoke: the request does not match AgentInvokeRequest');
    const { stream_subject: streamSubject, ...request } = payload;
    const onToken =
      streamSubject === undefined
        ? undefined
        : (token: string): void => {
            deps.bus.notify<AgentStreamToken>(streamSubject, { token }).catch((err: unknown) => {
              deps.logger.warn({ err, subject: streamSubject }, 'could not forward a streamed token');
            });
          };
    return deps.invocation.execute(request, onToken === undefined ? {} : { onToken });
  };
}
