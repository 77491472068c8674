import { Type } from 'typebox';
import {
  ChatCompletion,
  ChatCompletionRequest,
  ErrorEnvelope,
  OpenAiModel,
  OpenAiModelList,
  type ChatMessageIn,
  type InvocationOutcome,
} from '@agent-platform/contracts';
import { assertAgentRunning, Errors, type AgentRecord } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';
import { toErrorReply } from '../http/error-handler.ts';
import { INVOCATION_ERRORS } from '../http/error-responses.ts';
import { clientGoneSignal, lazyEventStream, sseData } from '../http/event-stream.ts';
import { withWorkerAudit } from '../http/audit-hook.ts';
import { createAgentInvoker } from '../invocation/agent-invoker.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * POST /chat/completions (spec §Endpoints: "an OpenAI-style compatible route", not shown; ours is
 * in docs/invocation.md): the OpenAI chat-completions protocol with an agent as the model, so
 * OpenAI SDKs and tools can talk to agents. `model` names the agent (its name or id); the input is
 * the last `user` message, and earlier messages are ignored in favour of the agent's canonical
 * session, which is the conversation the agent remembers. Errors keep the platform's envelope,
 * whose `error.message` and `error.code` are where OpenAI clients look.
 *
 * Every route is also served under `/v1` (docs/invocation.md "OpenAI clients"): clients and tools
 * configured the usual way (`baseURL: http://host:4200/v1`) call `/v1/chat/completions`, and list
 * their models with `/v1/models`, which here lists the agents the caller may invoke.
 */
export const chatRoutes: RoutePlugin = (app, deps) => {
  const invoker = createAgentInvoker(deps);

  for (const path of ['/chat/completions', '/v1/chat/completions'])
    app.post(
      path,
      {
        config: { action: 'AgentInvoke' },
        schema: {
          tags: ['agents'],
          summary: 'OpenAI-compatible chat completion answered by an agent (model = agent name or id)',
          body: ChatCompletionRequest,
          response: { 200: ChatCompletion, ...INVOCATION_ERRORS },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const message = lastUserText(body.messages);
        invoker.checkMessage(message);
        const agent = await agentOf(deps, body.model);
        assertAgentRunning(agent);
        const invocation = {
          agent_id: agent.id,
          source: 'Chat',
          message,
          correlation_id: request.id,
          caller: request.caller.identity,
          caller_role: request.caller.role,
        };
        const signal = clientGoneSignal(reply);
        const id = `chatcmpl-${request.id}`;
        const created = Math.floor(deps.clock.now().getTime() / 1000);
        if (body.stream !== true) {
          // The worker appends the request's audit entry with its answer: one commit fewer.
          const { result } = await withWorkerAudit(request, (auditEntry) => invoker.invoke(invocation, { signal, auditEntry }));
          return completion(id, created, body.model, result);
        }
        const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
          id,
          object: 'chat.completion.chunk',
          created,
          model: body.model,
          choices: [{ index: 0, delta, finish_reason: null, ...extra }],
        });
        return lazyEventStream(
          reply,
          async (write) => {
            let first = true;
            const { result } = await invoker.invoke(invocation, {
              signal,
              onToken: (text) => {
                write(sseData(chunk(first ? { role: 'assistant', content: text } : { content: text })));
                first = false;
              },
            });
            const done = chunk({}, { finish_reason: 'stop' });
            write(sseData({ ...done, usage: usageOf(result) }));
            write(sseData('[DONE]'));
          },
          (error, write) => {
            write(sseData(toErrorReply(error).body));
            write(sseData('[DONE]'));
          },
        );
      },
    );

  app.get(
    '/v1/models',
    {
      config: { action: 'AgentInvoke' },
      schema: {
        tags: ['agents'],
        summary: 'OpenAI-compatible model list: the Running agents the caller may invoke, by name',
        response: { 200: OpenAiModelList },
      },
    },
    async () => ({
      object: 'list' as const,
      data: (await deps.agents.list()).filter((a) => a.state === 'Running').map(openAiModel),
    }),
  );

  app.get(
    '/v1/models/:model',
    {
      config: { action: 'AgentInvoke' },
      schema: {
        tags: ['agents'],
        summary: 'OpenAI-compatible model: one agent by name or id (404 when none or not Running)',
        params: Type.Object({ model: Type.String({ minLength: 1 }) }),
        response: { 200: OpenAiModel, 404: ErrorEnvelope },
      },
    },
    async (request) => {
      const agent = await agentOf(deps, request.params.model);
      if (agent.state !== 'Running') throw Errors.notFound('agent', request.params.model);
      return openAiModel(agent);
    },
  );
};

function openAiModel(agent: AgentRecord): OpenAiModel {
  return {
    id: agent.name,
    object: 'model',
    created: Math.floor(Date.parse(agent.created_at) / 1000),
    owned_by: 'agent-platform',
  };
}

async function agentOf(deps: ApiDeps, model: string): Promise<AgentRecord> {
  // A package name may itself look like a UUID: an id that names no agent is tried as a name.
  const agent =
    (UUID.test(model) ? await deps.agents.get(model) : null) ?? (await deps.agents.getByName(model));
  if (agent === null) throw Errors.notFound('agent', model);
  return agent;
}

/** The text of the last `user` message: a string, or the `text` parts of a content array. */
function lastUserText(messages: ChatMessageIn[]): string {
  const last = messages.findLast((m) => m.role === 'user');
  if (last === undefined)
    throw Errors.validation("messages must contain a 'user' message: its text is the agent's input");
  if (typeof last.content === 'string') return last.content;
  if (last.content === null) return '';
  return last.content
    .map((part) => (isTextPart(part) ? part.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

function isTextPart(part: unknown): part is { type: 'text'; text: string } {
  return (
    typeof part === 'object' &&
    part !== null &&
    (part as { type?: unknown }).type === 'text' &&
    typeof (part as { text?: unknown }).text === 'string'
  );
}

function usageOf(result: InvocationOutcome) {
  const { input_tokens: prompt, output_tokens: completionTokens } = result.usage;
  return {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
  };
}

function completion(id: string, created: number, model: string, result: InvocationOutcome): ChatCompletion {
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: result.content }, finish_reason: 'stop' }],
    usage: usageOf(result),
  };
}
