import {
  ErrorEnvelope,
  FlatError,
  RunIdParams,
  RunList,
  RunListQuery,
  RunWorkflowBody,
  WorkflowDetailView,
  WorkflowIdParams,
  WorkflowList,
  WorkflowRunStatus,
  WorkflowStepBody,
  WorkflowStepReply,
} from '@agent-platform/contracts';
import { assertAgentRunning, Errors } from '@agent-platform/domain';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';
import { INVOCATION_ERRORS } from '../http/error-responses.ts';
import { clientGoneSignal } from '../http/event-stream.ts';
import { createAgentInvoker } from '../invocation/agent-invoker.ts';
import { runEventStream } from './run-events.ts';

/**
 * Spec §Endpoints "Workflows and runs" plus the run routes this platform adds in the spec's states
 * (cancel, suspend, resume, events) and the `Idempotency-Key` header on run (docs/workflows.md).
 * The api node only reads and writes the run document and publishes steps; agent workers run them.
 */
const TAGS = ['workflows'];
const workflowIds = { id: 'workflow' };
const runIds = { id: 'run' };
const Errors404 = { 400: ErrorEnvelope, 404: ErrorEnvelope };
const Errors409 = { ...Errors404, 409: ErrorEnvelope };
const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'A repeat with the same key (same caller, same workflow, same input) returns the same run.' }),
  ),
});

export const workflowRoutes: RoutePlugin = (app, deps) => {
  const invoker = createAgentInvoker(deps);

  app.get(
    '/workflows',
    { config: { action: 'WorkflowList' }, schema: { tags: TAGS, summary: 'Installed workflow definitions, sorted by name', response: { 200: WorkflowList } } },
    async () => ({ workflows: await deps.workflows.list() }),
  );

  app.get(
    '/workflows/:id',
    {
      config: { action: 'WorkflowStatus', ids: workflowIds },
      schema: { tags: TAGS, summary: 'One definition with its admission state', params: WorkflowIdParams, response: { 200: WorkflowDetailView, ...Errors404 } },
    },
    async (request) => deps.workflows.get(request.params.id),
  );

  app.post(
    '/workflows/:id/run',
    {
      config: { action: 'WorkflowRun', ids: workflowIds, audit: 'workflows' },
      schema: {
        tags: TAGS,
        summary: 'Start a run: 201 with the run Running; poll GET /runs/{id} or stream GET /runs/{id}/events',
        params: WorkflowIdParams,
        headers: IdempotencyHeaders,
        body: RunWorkflowBody,
        response: { 201: WorkflowRunStatus, 400: ErrorEnvelope, 403: Type.Union([ErrorEnvelope, FlatError]), 404: ErrorEnvelope, 409: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const { run, replayed } = await deps.workflows.start(
        request.params.id,
        { input: request.body.input, version: request.body.version, idempotencyKey: request.headers['idempotency-key'], businessKey: request.body.business_key },
        { identity: request.caller.identity },
      );
      request.auditMetadata = { run_id: run.id, ...(run.business_key === undefined ? {} : { business_key: run.business_key }) };
      if (replayed) void reply.header('idempotent-replayed', 'true');
      return reply.code(201).send(run);
    },
  );

  app.get(
    '/workflows/:id/runs',
    {
      config: { action: 'WorkflowList', ids: workflowIds },
      schema: { tags: TAGS, summary: "The workflow's runs, newest first", params: WorkflowIdParams, querystring: RunListQuery, response: { 200: RunList, ...Errors404 } },
    },
    async (request) => {
      await deps.workflows.get(request.params.id);
      return { runs: await deps.workflows.runs({ workflow_id: request.params.id, state: request.query.state, limit: request.query.limit ?? 100 }) };
    },
  );

  app.get(
    '/runs',
    {
      config: { action: 'WorkflowList' },
      schema: { tags: TAGS, summary: 'Runs of every workflow, newest first', querystring: RunListQuery, response: { 200: RunList, 400: ErrorEnvelope } },
    },
    async (request) => ({ runs: await deps.workflows.runs({ state: request.query.state, limit: request.query.limit ?? 100 }) }),
  );

  app.get(
    '/runs/:id',
    {
      config: { action: 'WorkflowStatus', ids: runIds },
      schema: { tags: TAGS, summary: 'One run', params: RunIdParams, response: { 200: WorkflowRunStatus, ...Errors404 } },
    },
    async (request) => deps.workflows.run(request.params.id),
  );

  for (const [verb, summary] of [
    ['cancel', 'Abort the step in flight and end the run Failed, naming who cancelled it (409 when already terminal)'],
    ['suspend', 'Running -> Suspended: the step in flight finishes and is checkpointed, nothing new starts'],
    ['resume', 'Suspended -> Running from the next step'],
  ] as const) {
    app.post(
      `/runs/:id/${verb}`,
      {
        config: { action: 'WorkflowRun', ids: runIds, audit: 'workflows' },
        schema: { tags: TAGS, summary, params: RunIdParams, response: { 200: WorkflowRunStatus, ...Errors409 } },
      },
      async (request) => deps.workflows[verb](request.params.id, { identity: request.caller.identity }),
    );
  }

  app.get(
    '/runs/:id/events',
    {
      config: { action: 'WorkflowStatus', ids: runIds },
      schema: {
        tags: TAGS,
        summary: 'Server-sent events of the run: `run` (as it is now), `step` per step result, `state` per transition, `end` once terminal',
        params: RunIdParams,
        response: { 200: Type.String({ description: 'text/event-stream' }), ...Errors404 },
      },
    },
    async (request, reply) => runEventStream(deps, request.params.id, reply, clientGoneSignal(reply)),
  );

  app.post(
    '/workflows/step',
    {
      config: { action: 'WorkflowRun', audit: 'workflows' },
      schema: {
        tags: TAGS,
        summary: 'Legacy: one agent call outside any run (no run record)',
        body: WorkflowStepBody,
        response: { 200: WorkflowStepReply, ...INVOCATION_ERRORS },
      },
    },
    async (request, reply) => {
      const { target_agent: agentId, input, timeout } = request.body;
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(agentId)) throw Errors.invalidId('agent', agentId);
      invoker.checkMessage(input);
      const agent = await deps.agents.get(agentId);
      if (agent === null) throw Errors.notFound('agent', agentId);
      assertAgentRunning(agent);
      const { result } = await invoker.invoke(
        { agent_id: agentId, source: 'Workflow', message: input, correlation_id: request.id, caller: request.caller.identity, caller_role: request.caller.role },
        { signal: clientGoneSignal(reply), ...(timeout === undefined ? {} : { timeoutMs: timeout }) },
      );
      return { output: result.content, pii_tokenized: result.pii_tokenized === true, duration: result.duration_ms };
    },
  );
};
