import { Type, type Static } from 'typebox';
import { BusinessKey } from './retention.ts';
import { WorkflowStep } from '../workflow-step.ts';

/**
 * HTTP bodies of spec §Endpoints "Workflows and runs" (§Resources WorkflowDefinition,
 * WorkflowRunStatus, §States "Workflow run", "Workflow admission state") and the routes this
 * platform adds in the spec's states (cancel, suspend, resume, events). docs/workflows.md says
 * what each route does.
 */

const Uuid = (description: string) => Type.String({ description });
const Timestamp = (description: string) => Type.String({ description: `${description} ISO 8601 UTC.` });
const NullableTimestamp = (description: string) => Type.Union([Type.String(), Type.Null()], { description: `${description} ISO 8601 UTC, or null.` });

export const WorkflowIdParams = Type.Object({ id: Uuid('Workflow id (UUID).') });
export type WorkflowIdParams = Static<typeof WorkflowIdParams>;

export const RunIdParams = Type.Object({ id: Uuid('Run id (UUID).') });
export type RunIdParams = Static<typeof RunIdParams>;

/** spec §States "Workflow admission state". */
export const AdmissionState = Type.Union([Type.Literal('active'), Type.Literal('draining'), Type.Literal('suspended')]);
export type AdmissionState = Static<typeof AdmissionState>;

/** An item of GET /workflows. */
export const WorkflowDefinitionView = Type.Object({
  id: Uuid('Workflow id (UUID), kept across upgrades of its package.'),
  name: Type.String({ description: 'The workflow-template package name.' }),
  description: Type.String(),
  steps: Type.Array(WorkflowStep, { description: 'In canonical form: aliases resolved, defaults filled in (DECISIONS D8).' }),
  created_at: Timestamp('When the workflow was first installed.'),
});
export type WorkflowDefinitionView = Static<typeof WorkflowDefinitionView>;

/** GET /workflows/{id}: the definition with its admission state. */
export const WorkflowDetailView = Type.Intersect([
  WorkflowDefinitionView,
  Type.Object({
    admission_state: Type.Union([AdmissionState, Type.Null()], {
      description:
        '`active` accepts new runs; `draining` refuses them while runs already in flight finish; `suspended` none in flight, none admitted; null when no admission record exists.',
    }),
  }),
]);
export type WorkflowDetailView = Static<typeof WorkflowDetailView>;

export const WorkflowList = Type.Object({ workflows: Type.Array(WorkflowDefinitionView) });
export type WorkflowList = Static<typeof WorkflowList>;

/** spec §States "Workflow run". Terminal: Completed, Failed, Escalated. */
export const RunState = Type.Union([
  Type.Literal('Pending'),
  Type.Literal('Running'),
  Type.Literal('Suspended'),
  Type.Literal('Completed'),
  Type.Literal('Failed'),
  Type.Literal('Escalated'),
]);
export type RunState = Static<typeof RunState>;
export const RUN_STATES: readonly RunState[] = ['Pending', 'Running', 'Suspended', 'Completed', 'Failed', 'Escalated'];
export const TERMINAL_RUN_STATES: ReadonlySet<RunState> = new Set(['Completed', 'Failed', 'Escalated']);

/** One finished step of a run (a Loop step gives one per iteration). */
export const StepResultView = Type.Object({
  step_name: Type.String(),
  agent_id: Type.String({ description: 'The agent that ran the step (a Collect step names its agent without calling it).' }),
  agent_name: Type.String(),
  output: Type.String(),
  tokens_used: Type.Integer({ minimum: 0 }),
  duration_ms: Type.Integer({ minimum: 0 }),
});
export type StepResultView = Static<typeof StepResultView>;

/** spec §Resources WorkflowRunStatus. */
/**
 * A state-changing tool call journaled before it was made (docs/tools.md "Escalated"): the key
 * the system of record may de-duplicate on, what was called, when, by which worker, and a hash of
 * its arguments (never the arguments themselves).
 */
export const JournaledToolCall = Type.Object({
  idempotency_key: Type.String(),
  tool: Type.String({ description: 'The tool name the model called.' }),
  provider_id: Type.String({ description: 'The integration (or skill) that provides it.' }),
  native_tool: Type.String({ description: 'The tool called on the provider (a contract tool is translated).' }),
  args_hash: Type.String({ description: '`sha256:<hex>` of the canonical JSON of the arguments sent.' }),
  at: Timestamp('When the call was journaled, just before it was made.'),
  worker: Type.String({ description: 'The worker process that made it.' }),
});
export type JournaledToolCall = Static<typeof JournaledToolCall>;

export const WorkflowRunStatus = Type.Object({
  id: Uuid('Run id (UUID).'),
  workflow_id: Uuid('The workflow this run executes (UUID).'),
  workflow_name: Type.String(),
  input: Type.String(),
  state: RunState,
  step_results: Type.Array(StepResultView, { description: 'Finished steps in step order; skipped steps have none.' }),
  output: Type.Union([Type.String(), Type.Null()], { description: 'The last step output once Completed; null before.' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the run Failed (or was Escalated); null otherwise.' }),
  started_at: Timestamp('When the run was created.'),
  completed_at: NullableTimestamp('When the run reached a terminal state.'),
  business_key: Type.Optional(
    Type.String({ description: 'Beyond the spec: the claim, policy or case number the run was started for (docs/retention.md "Business keys"); absent when none was given.' }),
  ),
  escalation: Type.Optional(
    Type.Object(
      {
        step: Type.String({ description: 'The step that was interrupted.' }),
        calls: Type.Array(JournaledToolCall, { description: 'Its state-changing tool calls whose outcome is unknown.' }),
      },
      { description: 'Beyond the spec, present once Escalated: which calls are in doubt (docs/tools.md "Escalated").' },
    ),
  ),
});
export type WorkflowRunStatus = Static<typeof WorkflowRunStatus>;

export const RunList = Type.Object({ runs: Type.Array(WorkflowRunStatus) });
export type RunList = Static<typeof RunList>;

/** POST /workflows/{id}/run. */
export const RunWorkflowBody = Type.Object(
  {
    input: Type.String({ description: 'The workflow input: `{{input}}` of the first step.' }),
    version: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Beyond the spec: run this version of the definition, which must be the installed one (a version an upgrade replaced is draining or suspended: 403). Default: the installed version.',
      }),
    ),
    business_key: Type.Optional({
      ...BusinessKey,
      description:
        'Beyond the spec: the claim, policy or case number this run is for (1-128 printable characters). Stored on the run; a legal hold on the key keeps the run (docs/retention.md).',
    }),
  },
  { additionalProperties: false },
);
export type RunWorkflowBody = Static<typeof RunWorkflowBody>;

/** Query of GET /workflows/{id}/runs and GET /runs. */
export const RunListQuery = Type.Object(
  {
    state: Type.Optional({ ...RunState, description: 'Only runs in this state (Pending, Running, Suspended, Completed, Failed, Escalated).' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Beyond the spec: at most this many runs, newest first (default 100).' })),
  },
  { additionalProperties: false },
);
export type RunListQuery = Static<typeof RunListQuery>;

/** POST /workflows/step (legacy: one agent call, no run record). */
export const WorkflowStepBody = Type.Object(
  {
    target_agent: Uuid('The agent to call (UUID).'),
    input: Type.String({ description: 'The message given to the agent.' }),
    timeout: Type.Optional(Type.Integer({ minimum: 1, description: 'Milliseconds the call may take; default [agents] invocation_timeout_secs.' })),
  },
  { additionalProperties: false },
);
export type WorkflowStepBody = Static<typeof WorkflowStepBody>;

export const WorkflowStepReply = Type.Object({
  output: Type.String(),
  pii_tokenized: Type.Boolean({ description: 'Whether the privacy gateway replaced personal data with tokens in this step\'s model request (docs/privacy-gateway.md).' }),
  duration: Type.Integer({ minimum: 0, description: 'Milliseconds.' }),
});
export type WorkflowStepReply = Static<typeof WorkflowStepReply>;

/** POST /runs/{id}/cancel, /suspend, /resume: the run after the transition. */
export const RunTransitionReply = WorkflowRunStatus;
