import {
  AgentIdParams,
  ErrorEnvelope,
  ScheduleCreateBody,
  ScheduleCreated,
  ScheduleFireList,
  ScheduleFiresQuery,
  ScheduleIdParams,
  ScheduleList,
  SchedulePaused,
  ScheduleResumed,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';
import { createAgentInvoker } from '../invocation/agent-invoker.ts';

/**
 * Spec §Endpoints "Schedules and cron jobs", the schedule surface (the cron surface is
 * cron-job-routes.ts; both read and write the same records, docs/schedules.md). Beyond the spec:
 * `every_secs` or `at` instead of `expression`, `tz`, `overlap`, and GET /schedules/{id}/fires.
 */
const TAGS = ['schedules'];
const AGENT = { id: 'agent' };
const SCHEDULE = { id: 'schedule' };
const Errors4xx = { 400: ErrorEnvelope, 404: ErrorEnvelope };

export const scheduleRoutes: RoutePlugin = (app, deps) => {
  const invoker = createAgentInvoker(deps);

  app.get(
    '/agents/:id/schedules',
    {
      config: { action: 'AgentStatus', ids: AGENT },
      schema: {
        tags: TAGS,
        summary: "The agent's schedules (CronJobs), oldest first",
        params: AgentIdParams,
        response: { 200: ScheduleList, ...Errors4xx },
      },
    },
    async (request) => ({ schedules: await deps.schedules.list(request.params.id) }),
  );

  app.post(
    '/agents/:id/schedules',
    {
      config: { action: 'ScheduleCreate', ids: AGENT, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary:
          'Create a schedule firing `prompt` at the agent: a cron `expression` (5 or 6 fields, optional IANA `tz`), or instead `every_secs` or `at`',
        params: AgentIdParams,
        body: ScheduleCreateBody,
        response: { 201: ScheduleCreated, ...Errors4xx, 413: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const { agent_id: _ignored, ...input } = request.body;
      invoker.checkMessage(input.prompt);
      const job = await deps.schedules.create(request.params.id, input, 'schedule');
      return reply.code(201).send({ id: job.id });
    },
  );

  for (const [verb, enabled, status] of [
    ['pause', false, 'paused'],
    ['resume', true, 'active'],
  ] as const) {
    app.post(
      `/schedules/:id/${verb}`,
      {
        config: { action: 'ScheduleUpdate', ids: SCHEDULE, audit: 'agents' },
        schema: {
          tags: TAGS,
          summary: enabled
            ? 'Enable the schedule: it fires again from its next slot'
            : 'Disable the schedule: no slot fires until it is resumed',
          params: ScheduleIdParams,
          response: { 200: enabled ? ScheduleResumed : SchedulePaused, ...Errors4xx },
        },
      },
      async (request) => {
        await deps.schedules.setEnabled(request.params.id, enabled);
        return { status };
      },
    );
  }

  app.delete(
    '/schedules/:id',
    {
      config: { action: 'ScheduleDelete', ids: SCHEDULE, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Delete the schedule',
        params: ScheduleIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...Errors4xx },
      },
    },
    async (request, reply) => {
      await deps.schedules.delete(request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/schedules/:id/fires',
    {
      config: { action: 'AgentStatus', ids: SCHEDULE },
      schema: {
        tags: TAGS,
        summary:
          'Beyond the spec: what became of the recent slots (fired, duplicate, refused, failed, missed, skipped), newest first',
        params: ScheduleIdParams,
        querystring: ScheduleFiresQuery,
        response: { 200: ScheduleFireList, ...Errors4xx },
      },
    },
    async (request) => deps.schedules.fires(request.params.id, request.query.limit ?? 50),
  );
};
