import {
  CronJobCreateBody,
  CronJobCreated,
  CronJobList,
  ErrorEnvelope,
  FlatError,
  InvocationResult,
  JobEnableBody,
  JobEnabledStatus,
  ScheduleIdParams,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';
import { INVOCATION_ERRORS } from '../http/error-responses.ts';
import { clientGoneSignal } from '../http/event-stream.ts';
import { createAgentInvoker } from '../invocation/agent-invoker.ts';
import { toInvocationResult } from '../invocation/invocation-views.ts';

/**
 * Spec §Endpoints "Schedules and cron jobs", the cron surface: the same records as the schedule
 * routes. Condition jobs (docs/schedules.md "Condition jobs"): PUT /conditions/jobs/{id}/enable
 * toggles a job of the same store by id, exactly as PUT /cron/jobs/{id}/enable does; they are
 * never listed, created or deleted through the API (spec).
 */
const TAGS = ['schedules'];
const Errors4xx = { 400: ErrorEnvelope, 404: ErrorEnvelope };

export const cronJobRoutes: RoutePlugin = (app, deps) => {
  const invoker = createAgentInvoker(deps);

  app.get(
    '/cron/jobs',
    {
      config: { action: 'AgentList' },
      schema: {
        tags: TAGS,
        summary: 'Every cron job (schedule) of every agent, oldest first',
        response: { 200: CronJobList },
      },
    },
    async () => ({ jobs: await deps.schedules.list() }),
  );

  app.post(
    '/cron/jobs',
    {
      // Spec §Errors: a missing agent_id is the flat `{error}` body, every other error the envelope.
      config: { action: 'ScheduleCreate', audit: 'agents', flatWhenMissing: ['agent_id'] },
      schema: {
        tags: TAGS,
        summary:
          'Create a cron job for `agent_id`: a cron `expression` (5 or 6 fields, optional IANA `tz`), or instead `every_secs` or `at`',
        body: CronJobCreateBody,
        response: {
          201: CronJobCreated,
          400: Type.Union([ErrorEnvelope, FlatError]),
          404: ErrorEnvelope,
          413: ErrorEnvelope,
        },
      },
    },
    async (request, reply) => {
      const { agent_id: agentId, ...input } = request.body;
      invoker.checkMessage(input.prompt);
      const job = await deps.schedules.create(agentId, input, 'cron');
      return reply.code(201).send({ id: job.id, agent_id: job.agent_id });
    },
  );

  app.delete(
    '/cron/jobs/:id',
    {
      config: { action: 'ScheduleDelete', ids: { id: 'cron job' }, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Delete the cron job',
        params: ScheduleIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...Errors4xx },
      },
    },
    async (request, reply) => {
      await deps.schedules.delete(request.params.id, 'cron job');
      return reply.code(204).send(null);
    },
  );

  for (const [path, noun] of [
    ['/cron/jobs/:id/enable', 'cron job'],
    ['/conditions/jobs/:id/enable', 'condition job'],
  ] as const) {
    app.put(
      path,
      {
        config: { action: 'ScheduleUpdate', ids: { id: noun }, audit: 'agents' },
        schema: {
          tags: TAGS,
          summary: `Enable (default) or disable the ${noun}; the body may be left out`,
          params: ScheduleIdParams,
          body: JobEnableBody,
          response: { 200: JobEnabledStatus, ...Errors4xx },
        },
      },
      async (request) => {
        const enabled = request.body.enabled ?? true;
        await deps.schedules.setEnabled(request.params.id, enabled, noun);
        return { status: enabled ? ('enabled' as const) : ('disabled' as const) };
      },
    );
  }

  app.post(
    '/cron/jobs/:id/run',
    {
      config: { action: 'AgentInvoke', ids: { id: 'cron job' } },
      schema: {
        tags: TAGS,
        summary:
          'Fire the job now and wait for the agent: its InvocationResult, source {"Cron": {schedule_id, expression, scheduled_at}}',
        params: ScheduleIdParams,
        response: { 200: InvocationResult, ...INVOCATION_ERRORS },
      },
    },
    async (request, reply) => {
      const run = await deps.schedules.startManualRun(request.params.id, 'cron job');
      try {
        const call = { ...run.invocation, correlation_id: request.id, caller: request.caller.identity, caller_role: request.caller.role };
        const { result } = await invoker.invoke(call, { signal: clientGoneSignal(reply) });
        await run.finish({ ok: true });
        return toInvocationResult(result);
      } catch (error) {
        await run.finish({ ok: false, error });
        throw error;
      }
    },
  );
};
