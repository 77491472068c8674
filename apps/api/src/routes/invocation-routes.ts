import { AgentIdParams, AgentResponse, AgentSendBody, InvocationContext, InvocationResult } from '@agent-platform/contracts';
import { assertAgentRunning, Errors } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';
import { withWorkerAudit } from '../http/audit-hook.ts';
import { toErrorReply } from '../http/error-handler.ts';
import { INVOCATION_ERRORS } from '../http/error-responses.ts';
import { acceptsEventStream, clientGoneSignal, lazyEventStream, sseEvent } from '../http/event-stream.ts';
import { createAgentInvoker } from '../invocation/agent-invoker.ts';
import { toAgentResponse, toInvocationResult } from '../invocation/invocation-views.ts';

const TAGS = ['agents'];

/**
 * POST /agents/{id}/send and POST /agents/{id}/invoke (spec §Endpoints "Agents"). The api checks
 * the message size (413) and that the agent exists and is Running (a quick 404 / InvalidState
 * without a bus hop), then hands the invocation to an agent worker over the bus; the worker checks
 * again, authoritatively, and applies the rate limit, the idempotency key (scoped by the caller's
 * identity) and the licence (docs/invocation.md).
 */
export const invocationRoutes: RoutePlugin = (app, deps) => {
  const invoker = createAgentInvoker(deps);

  app.post(
    '/agents/:id/send',
    {
      config: { action: 'AgentSendMessage', ids: { id: 'agent' } },
      schema: {
        tags: TAGS,
        summary: 'Send a message; the reply as JSON, or as server-sent events with Accept: text/event-stream',
        params: AgentIdParams,
        body: AgentSendBody,
        response: { 200: AgentResponse, ...INVOCATION_ERRORS },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      invoker.checkMessage(request.body.message);
      await requireRunningAgent(deps, id);
      const invocation = { agent_id: id, source: 'Api', message: request.body.message, correlation_id: request.id, caller: request.caller.identity, caller_role: request.caller.role };
      const signal = clientGoneSignal(reply);
      if (!acceptsEventStream(request.headers.accept)) {
        // The worker appends the request's audit entry with its answer: one commit fewer.
        const answer = await withWorkerAudit(request, (auditEntry) => invoker.invoke(invocation, { signal, auditEntry }));
        return toAgentResponse(answer.result);
      }
      // SSE: `token` events as the model writes, then `done` with the AgentResponse, or `error`
      // with the error envelope if the invocation fails after the stream began.
      return lazyEventStream(
        reply,
        async (write) => {
          const { result } = await invoker.invoke(invocation, { signal, onToken: (text) => write(sseEvent('token', { text })) });
          write(sseEvent('done', toAgentResponse(result)));
        },
        (error, write) => write(sseEvent('error', toErrorReply(error).body)),
      );
    },
  );

  app.post(
    '/agents/:id/invoke',
    {
      config: { action: 'AgentInvoke', ids: { id: 'agent' } },
      schema: {
        tags: TAGS,
        summary: 'Structured invocation; a repeated idempotency_key answers 200 DuplicateInvocation with the recorded result',
        params: AgentIdParams,
        body: InvocationContext,
        response: { 200: InvocationResult, ...INVOCATION_ERRORS },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      invoker.checkMessage(request.body.message);
      await requireRunningAgent(deps, id);
      const call = { agent_id: id, ...request.body, caller: request.caller.identity, caller_role: request.caller.role };
      const { result, duplicate } = await withWorkerAudit(request, (auditEntry) => invoker.invoke(call, { signal: clientGoneSignal(reply), auditEntry }));
      // Spec §Agents: "returns the cached result as an error body with category
      // DuplicateInvocation and HTTP 200"; the error handler maps that category to 200.
      if (duplicate) throw Errors.duplicateInvocation(request.body.idempotency_key ?? '', toInvocationResult(result));
      return toInvocationResult(result);
    },
  );
};

/** 404 for an unknown agent, InvalidState naming the state for a Suspended one (D9). */
async function requireRunningAgent(deps: ApiDeps, id: string): Promise<void> {
  const agent = await deps.agents.get(id);
  if (agent === null) throw Errors.notFound('agent', id);
  assertAgentRunning(agent);
}
