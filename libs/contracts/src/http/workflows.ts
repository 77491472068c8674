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

/** Where a journaled tool call stands (docs/tools.md "The tool-call journal"). */
export const ToolCallState = Type.Union([Type.Literal('started'), Type.Literal('answered'), Type.Literal('unknown'), Type.Literal('not_sent')], {
  description:
    '`started`: journaled, the request may be on its way; `answered`: the system answered (its result, or the error it reported, is recorded and replayed); `unknown`: cut off (abort, timeout, transport error, crash), it may or may not have taken effect; `not_sent`: refused before the request left (the integration was not connected).',
});
export type ToolCallState = Static<typeof ToolCallState>;

/**
 * A state-changing tool call as the journal keeps it (docs/tools.md "The tool-call journal"): the
 * key the system of record may de-duplicate on, what was called, where it stands, when and by which
 * worker, and a hash of its arguments (never the arguments, nor the result the journal replays).
 */
export const JournaledToolCall = Type.Object({
  position: Type.Integer({ minimum: 0, description: 'Its place among the state-changing calls of the step execution or invocation, from 0: a re-run is matched against the journal by it.' }),
  idempotency_key: Type.String({ description: 'Sent to the system of record; a repeat of the call always carries the key of the original.' }),
  tool: Type.String({ description: 'The tool name the model called.' }),
  provider_id: Type.String({ description: 'The integration (or skill) that provides it.' }),
  native_tool: Type.String({ description: 'The tool called on the provider (a contract tool is translated).' }),
  args_hash: Type.String({ description: '`sha256:<hex>` of the canonical JSON of the arguments sent.' }),
  state: ToolCallState,
  is_error: Type.Optional(Type.Boolean({ description: 'Once answered: true when the system answered with an error.' })),
  idempotent_keys: Type.Boolean({ description: 'Its integration honours idempotency keys: a call in doubt is retried with its key instead of escalated.' }),
  replays: Type.Integer({ minimum: 0, description: 'How many times a re-run was given the recorded answer instead of calling again.' }),
  at: Timestamp('When the call was journaled, just before it was made.'),
  answered_at: Type.Optional(Timestamp('When its answer was recorded.')),
  worker: Type.String({ description: 'The worker process that made it.' }),
  audit_seq: Type.Optional(Type.Integer({ description: 'The audit entry (seq) of its start.' })),
});
export type JournaledToolCall = Static<typeof JournaledToolCall>;

/** A journaled call of a run: which step execution made it. */
export const RunToolCall = Type.Object({
  step: Type.String({ description: 'The step that made it.' }),
  step_key: Type.String({ description: '`<step index>.<loop iteration>`: the execution of the step (part of the idempotency key).' }),
  ...JournaledToolCall.properties,
});
export type RunToolCall = Static<typeof RunToolCall>;

/** spec §Resources WorkflowRunStatus. */
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
  tool_calls: Type.Optional(
    Type.Array(RunToolCall, {
      description: 'Beyond the spec: the state-changing tool calls of the run\'s steps as the journal holds them, oldest first (docs/tools.md "The tool-call journal"); absent when there were none.',
    }),
  ),
  escalation: Type.Optional(
    Type.Object(
      {
        step: Type.String({ description: 'The step that was interrupted.' }),
        calls: Type.Array(JournaledToolCall, { description: 'The calls in doubt: whose outcome is unknown, or that a re-run would not have repeated.' }),
      },
      { description: 'Beyond the spec, present once Escalated: which calls a person must look up in the system of record, by key (docs/tools.md "Escalated").' },
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
