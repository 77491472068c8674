import {
  AgentIdParams,
  AgentList,
  AgentModelBody,
  AgentModelUpdated,
  AgentSessionList,
  AgentSkillList,
  AgentStatusView,
  type AgentSummary,
  AgentToolList,
  AgentUpdateBody,
  AgentUpdated,
  ErrorEnvelope,
  SessionList,
  SessionResetView,
  SessionView,
} from '@agent-platform/contracts';
import { agentStatus, agentSummary, Errors, type AgentRecord } from '@agent-platform/domain';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';

/**
 * Spec §Endpoints "Agents" except send and invoke (invocation routes), docs/agents.md. Agents
 * are created and removed only by the catalog ("Rules of the model" 1), so there is no POST or
 * DELETE /agents. Every `:id` is a UUID: anything else is 400 naming "agent".
 */
const TAGS = ['agents'];
const ids = { id: 'agent' };
// No JSON at all, not `null`: Fastify skips serialization for an undefined payload and sends Content-Length 0.
const Empty = Type.Unknown({ description: 'Empty body (Content-Length: 0).' });
const Errors404 = { 400: ErrorEnvelope, 404: ErrorEnvelope };

async function agentOr404(deps: ApiDeps, id: string): Promise<AgentRecord> {
  const agent = await deps.agents.get(id);
  if (agent === null) throw Errors.notFound('agent', id);
  return agent;
}

/** GET /agents (and the MCP list_agents tool): every agent, sorted by name, titled by its template. */
export async function agentSummaries(deps: Pick<ApiDeps, 'agents' | 'catalog'>): Promise<AgentSummary[]> {
  const titles = new Map(
    (await deps.catalog.installed())
      .filter((p) => p.type === 'agent-template')
      .map((p) => [p.name, p.title]),
  );
  const agents = await deps.agents.list();
  return agents.map((agent) => agentSummary(agent, titles.get(agent.name) ?? null));
}

export const agentRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/agents',
    {
      config: { action: 'AgentList' },
      schema: { tags: TAGS, summary: 'Every agent, sorted by name', response: { 200: AgentList } },
    },
    async () => ({ agents: await agentSummaries(deps) }),
  );

  app.get(
    '/agents/:id',
    {
      config: { action: 'AgentStatus', ids },
      schema: {
        tags: TAGS,
        summary: 'Status, uptime and invocation counters',
        params: AgentIdParams,
        response: { 200: AgentStatusView, ...Errors404 },
      },
    },
    async (request) => {
      const agent = await agentOr404(deps, request.params.id);
      return agentStatus(agent, await deps.agentStats.read(agent.id), deps.clock.now());
    },
  );

  app.put(
    '/agents/:id',
    {
      config: { action: 'AgentUpdate', ids, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Accepts any JSON object and changes nothing (spec)',
        params: AgentIdParams,
        body: AgentUpdateBody,
        response: { 200: AgentUpdated, ...Errors404 },
      },
    },
    async (request) => {
      await agentOr404(deps, request.params.id);
      return { status: 'updated' as const };
    },
  );

  for (const [verb, action, run] of [
    ['activate', 'AgentStart', (id: string) => deps.lifecycle.activate(id)],
    ['suspend', 'AgentStop', (id: string) => deps.lifecycle.suspend(id)],
  ] as const) {
    app.post(
      `/agents/:id/${verb}`,
      {
        config: { action, ids, audit: 'agents' },
        schema: {
          tags: TAGS,
          summary:
            verb === 'activate'
              ? 'Suspended -> Running, after the contract check'
              : 'Running -> Suspended; aborts in-flight work',
          params: AgentIdParams,
          response: { 200: Empty, ...Errors404, 500: ErrorEnvelope },
        },
      },
      async (request, reply) => {
        await run(request.params.id);
        // Spec §States "Agent": 200 with an empty body.
        return reply.code(200).send(undefined);
      },
    );
  }

  app.put(
    '/agents/:id/model',
    {
      config: { action: 'AgentUpdate', ids, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Record a model preference (no routing change occurs)',
        params: AgentIdParams,
        body: AgentModelBody,
        response: { 200: AgentModelUpdated, ...Errors404 },
      },
    },
    async (request) => {
      const { model_id, provider } = request.body;
      await deps.agents.update(request.params.id, (current) => ({
        ...current,
        model_preference: { model_id, provider },
        updated_at: deps.clock.now().toISOString(),
      }));
      return { status: 'model_updated' as const };
    },
  );

  app.get(
    '/agents/:id/tools',
    {
      config: { action: 'AgentStatus', ids },
      schema: {
        tags: TAGS,
        summary: 'Always empty (spec)',
        params: AgentIdParams,
        response: { 200: AgentToolList, ...Errors404 },
      },
    },
    async (request) => {
      await agentOr404(deps, request.params.id);
      return { tools: [] };
    },
  );

  app.get(
    '/agents/:id/skills',
    {
      config: { action: 'AgentStatus', ids },
      schema: {
        tags: TAGS,
        summary: 'Always empty (spec)',
        params: AgentIdParams,
        response: { 200: AgentSkillList, ...Errors404 },
      },
    },
    async (request) => {
      await agentOr404(deps, request.params.id);
      return { skills: [] };
    },
  );

  app.post(
    '/agents/:id/session/reset',
    {
      config: { action: 'AgentUpdate', ids, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Clear the canonical session; per-channel transcripts remain',
        params: AgentIdParams,
        response: { 200: SessionResetView, ...Errors404 },
      },
    },
    async (request) => {
      const agent = await agentOr404(deps, request.params.id);
      await deps.sessions.reset(agent.id);
      return { status: 'reset' as const };
    },
  );

  app.delete(
    '/agents/:id/history',
    {
      config: { action: 'AgentUpdate', ids, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Delete the canonical session and every per-channel transcript',
        params: AgentIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...Errors404 },
      },
    },
    async (request, reply) => {
      const agent = await agentOr404(deps, request.params.id);
      await deps.sessions.deleteAll(agent.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/agents/:id/session',
    {
      config: { action: 'SessionRead', ids },
      schema: {
        tags: TAGS,
        summary: 'Session state (no transcript)',
        params: AgentIdParams,
        response: { 200: SessionView, ...Errors404 },
      },
    },
    async (request) => {
      const agent = await agentOr404(deps, request.params.id);
      return { agent_id: agent.id, state: await deps.sessions.state(agent.id), messages: [] };
    },
  );

  app.get(
    '/agents/:id/sessions',
    {
      config: { action: 'SessionRead', ids },
      schema: {
        tags: TAGS,
        summary: "The agent's sessions",
        params: AgentIdParams,
        response: { 200: AgentSessionList, ...Errors404 },
      },
    },
    async (request) => {
      const agent = await agentOr404(deps, request.params.id);
      return { sessions: [{ agent_id: agent.id, state: await deps.sessions.state(agent.id) }] };
    },
  );

  app.get(
    '/sessions',
    {
      config: { action: 'SessionRead' },
      schema: { tags: TAGS, summary: 'One session row per agent', response: { 200: SessionList } },
    },
    async () => {
      const agents = await deps.agents.list();
      const rows = await Promise.all(
        agents.map(async (agent) => ({
          agent_id: agent.id,
          agent_name: agent.name,
          state: await deps.sessions.state(agent.id),
        })),
      );
      return { sessions: rows };
    },
  );
};
