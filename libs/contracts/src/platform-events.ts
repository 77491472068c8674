import { Type, type Static } from 'typebox';

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
