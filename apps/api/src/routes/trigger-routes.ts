import {
  AgentIdParams,
  ErrorEnvelope,
  TriggerCreateBody,
  TriggerCreated,
  TriggerFireList,
  TriggerFiresQuery,
  TriggerIdParams,
  TriggerList,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';

/**
 * Spec §Endpoints "Triggers" (docs/events.md "Triggers"). Beyond the spec: `created_at` on each
 * trigger, the body shape of GET /agents/{id}/triggers (the same `{triggers}` as GET /triggers),
 * and GET /triggers/{id}/fires. The agent workers do the matching and firing.
 */
const TAGS = ['triggers'];
const AGENT = { id: 'agent' };
const TRIGGER = { id: 'trigger' };
const Errors4xx = { 400: ErrorEnvelope, 404: ErrorEnvelope };

export const triggerRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/triggers',
    {
      config: { action: 'TriggerRead' },
      schema: { tags: TAGS, summary: 'Every trigger, oldest first', response: { 200: TriggerList } },
    },
    async () => ({ triggers: await deps.triggers.list() }),
  );

  app.get(
    '/agents/:id/triggers',
    {
      config: { action: 'TriggerRead', ids: AGENT },
      schema: {
        tags: TAGS,
        summary: "The agent's triggers, oldest first (body shape ours: the spec shows none)",
        params: AgentIdParams,
        response: { 200: TriggerList, ...Errors4xx },
      },
    },
    async (request) => ({ triggers: await deps.triggers.listForAgent(request.params.id) }),
  );

  app.post(
    '/agents/:id/triggers',
    {
      config: { action: 'TriggerManage', ids: AGENT, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Create a trigger: a matching platform event invokes the agent with `prompt_template` (`{{event}}` = the event as JSON)',
        params: AgentIdParams,
        body: TriggerCreateBody,
        response: { 201: TriggerCreated, ...Errors4xx },
      },
    },
    async (request, reply) => {
      const trigger = await deps.triggers.create(request.params.id, request.body);
      return reply.code(201).send({ id: trigger.id });
    },
  );

  app.delete(
    '/triggers/:id',
    {
      config: { action: 'TriggerManage', ids: TRIGGER, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Delete the trigger',
        params: TriggerIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...Errors4xx },
      },
    },
    async (request, reply) => {
      await deps.triggers.delete(request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/triggers/:id/fires',
    {
      config: { action: 'TriggerRead', ids: TRIGGER },
      schema: {
        tags: TAGS,
        summary: 'Beyond the spec: what became of the events that matched the trigger (fired, failed, skipped_suspended, ...), newest first',
        params: TriggerIdParams,
        querystring: TriggerFiresQuery,
        response: { 200: TriggerFireList, ...Errors4xx },
      },
    },
    async (request) => ({ fires: await deps.triggers.fires(request.params.id, request.query.limit ?? 50) }),
  );
};
