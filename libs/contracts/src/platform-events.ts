import { Type, type Static } from 'typebox';
import { compiledCheck } from './compiled-check.ts';

/**
 * The catalogue of platform events (issue 11, docs/events.md): what triggers match and outbound
 * webhooks deliver. Every event travels as one durable bus message on `Streams.platformEvents`
 * whose envelope `id` is the event's `id`, so a consumer that sees it twice (redelivery) can tell.
 *
 * `kind` is dotted, area first. `agent_id` is the agent the event is about (null for platform-wide
 * events); webhooks deliver the events of their agent. `data` is the kind's payload; each kind's
 * schema is in `EventData` below (kept complete by the compiler through `EventKind`).
 */
export const EVENT_KINDS = [
  'agent.installed',
  'agent.upgraded',
  'agent.activated',
  'agent.suspended',
  'agent.uninstalled',
  'invocation.completed',
  'invocation.failed',
  'workflow.run.started',
  'workflow.step.completed',
  'workflow.run.completed',
  'workflow.run.failed',
  'workflow.run.cancelled',
  'schedule.fired',
  'schedule.missed',
  'channel.message.received',
  'licence.budget.warning',
  'licence.budget.exhausted',
  'audit.verification.failed',
  'package.revoked',
] as const;
export const EventKind = Type.Enum(EVENT_KINDS);
export type EventKind = (typeof EVENT_KINDS)[number];

/** One platform event, as published, matched by triggers and delivered to webhooks. */
export const PlatformEvent = Type.Object({
  /** Unique per event (a UUID, or a deterministic key where the source may emit twice). */
  id: Type.String({ minLength: 1 }),
  kind: EventKind,
  occurred_at: Type.String(),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  data: Type.Record(Type.String(), Type.Unknown()),
});
export type PlatformEvent = Static<typeof PlatformEvent>;

/** Consumers check the events they take off `platform.events` (every send emits one). */
export const isPlatformEvent = compiledCheck(PlatformEvent);

const Iso = (description: string) => Type.String({ description: `${description} ISO 8601 UTC.` });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * The triggers whose firing caused this event, oldest first (docs/events.md "Loops"): present on
 * the events of an invocation that a trigger started. A trigger never fires on an event whose
 * chain names it, and no trigger fires once the chain holds `MAX_TRIGGER_CHAIN` triggers.
 */
export const TriggerChain = Type.Array(Type.String(), {
  description: 'Ids of the triggers whose firing led to this event, oldest first; absent when no trigger was involved.',
});
export type TriggerChain = Static<typeof TriggerChain>;
/** How many triggers may chain (A fires B fires C ...) before the next event fires none. */
export const MAX_TRIGGER_CHAIN = 8;

const AgentFields = {
  name: Type.String({ description: 'The agent-template package name.' }),
  version: Type.String({ description: 'The installed template version.' }),
};
const StateFields = { name: Type.String({ description: 'The agent name.' }), state: Type.String({ description: 'The state after the change.' }) };
const InvocationFields = {
  invocation_id: Nullable(Type.String({ description: 'The invocation id when the caller named one.' })),
  correlation_id: Type.String(),
  source: Type.String({ description: 'The source name: Api, Chat, Workflow, Cron, Channel, Trigger.' }),
  duration_ms: Type.Integer({ minimum: 0 }),
  trigger_chain: Type.Optional(TriggerChain),
};
const RunFields = {
  run_id: Type.String(),
  workflow_id: Type.String(),
  workflow_name: Type.String(),
};
const ScheduleFields = {
  schedule_id: Type.String(),
  slot_at: Iso('The slot.'),
};
const BudgetFields = {
  budget: Type.String({ description: 'Which budget: `spend` (USD) or `transactions`, with its scope, e.g. `spend:provider:openai`.' }),
  used: Type.Number(),
  limit: Type.Number(),
  pct: Type.Number({ description: 'used / limit * 100 when the threshold was crossed.' }),
  period_start: Type.String(),
};

/**
 * The `data` of each event kind (docs/events.md has the catalogue). The mapped type below makes the
 * compiler insist on one schema per entry of EVENT_KINDS.
 */
export const EventData = {
  'agent.installed': Type.Object({ ...AgentFields, state: Type.String() }),
  'agent.upgraded': Type.Object({ ...AgentFields, previous_version: Nullable(Type.String()), state: Type.String() }),
  'agent.activated': Type.Object(StateFields),
  'agent.suspended': Type.Object(StateFields),
  'agent.uninstalled': Type.Object({ name: Type.String(), version: Type.String() }),
  'invocation.completed': Type.Object({
    ...InvocationFields,
    tokens_used: Type.Integer({ minimum: 0 }),
    content: Type.String({ description: 'The reply, cut to its first 4000 characters.' }),
  }),
  'invocation.failed': Type.Object({
    ...InvocationFields,
    category: Type.String({ description: 'The error category (spec §Errors).' }),
    message: Type.String(),
  }),
  'workflow.run.started': Type.Object(RunFields),
  'workflow.step.completed': Type.Object({ ...RunFields, step_id: Type.String(), status: Type.String() }),
  'workflow.run.completed': Type.Object({ ...RunFields, status: Type.Union([Type.Literal('Completed'), Type.Literal('Escalated')]) }),
  'workflow.run.failed': Type.Object({ ...RunFields, status: Type.Literal('Failed'), error: Nullable(Type.String()) }),
  'workflow.run.cancelled': Type.Object({ ...RunFields, status: Type.Literal('Cancelled') }),
  'schedule.fired': Type.Object({ ...ScheduleFields, expression: Type.String({ description: 'The cron expression, or the `every`/`at` form, as the Cron source shows it.' }) }),
  'schedule.missed': Type.Object({ ...ScheduleFields, missed: Type.Integer({ minimum: 1, description: 'How many slots never fired.' }) }),
  'channel.message.received': Type.Object({
    channel_id: Type.String(),
    kind: Type.String({ description: 'The channel kind (slack, email, ...).' }),
    conversation: Type.String({ description: 'Chat, channel or address the message belongs to.' }),
    thread: Nullable(Type.String({ description: 'The thread inside the conversation, when the protocol has one.' })),
    sender: Type.String(),
    peer_message_id: Type.String(),
    text: Type.String({ description: 'The text, cut to its first 4000 characters.' }),
  }),
  'licence.budget.warning': Type.Object(BudgetFields),
  'licence.budget.exhausted': Type.Object(BudgetFields),
  'audit.verification.failed': Type.Object({
    first_invalid_seq: Nullable(Type.Integer({ description: 'The first entry that does not verify (GET /security/verify).' })),
    reason: Type.String(),
  }),
  'package.revoked': Type.Object({
    name: Type.String({ description: 'The revoked package.' }),
    version: Type.String({ description: 'The revoked version.' }),
    reason: Type.String({ description: 'The reason the registry gave for the security yank.' }),
    seq: Type.Integer({ minimum: 1, description: 'Its position on the registry revocation feed.' }),
    agents_suspended: Type.Array(Type.String(), { description: 'Ids of the agents this revocation suspended (those already Suspended are not listed).' }),
    workflows_drained: Type.Array(Type.String(), { description: 'Ids of the workflows whose admission it turned draining or suspended.' }),
  }),
} satisfies { [K in EventKind]: ReturnType<typeof Type.Object> };
export type EventData<K extends EventKind> = Static<(typeof EventData)[K]>;
