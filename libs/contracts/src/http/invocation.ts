import { Type, type Static } from 'typebox';

/**
 * Bodies of POST /agents/{id}/send and POST /agents/{id}/invoke (spec §Resources AgentResponse,
 * InvocationContext, InvocationResult). Request bodies refuse unknown fields: a misspelt
 * `idempotency_key` silently ignored would execute a retry twice. docs/invocation.md has the rules.
 */

/** A cron-fired run: the schedule that fired and when it was due. */
export const CronSource = Type.Object(
  {
    Cron: Type.Object(
      {
        schedule_id: Type.String({ minLength: 1 }),
        expression: Type.String({ minLength: 1 }),
        scheduled_at: Type.String({ description: 'ISO 8601 UTC.' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type CronSource = Static<typeof CronSource>;

/** A message that arrived on a channel; the fields inside are the channel adapter's. */
export const ChannelSource = Type.Object(
  { Channel: Type.Object({}, { additionalProperties: true, description: 'Channel-specific: e.g. channel id, sender.' }) },
  { additionalProperties: false },
);
export type ChannelSource = Static<typeof ChannelSource>;

/** spec InvocationContext `source`: the string `Api`, or an object for Channel or Cron sources. */
export const InvocationSource = Type.Union([Type.Literal('Api'), ChannelSource, CronSource], {
  description: 'The string `Api`, or `{"Channel": {...}}`, or `{"Cron": {schedule_id, expression, scheduled_at}}`.',
});
export type InvocationSource = Static<typeof InvocationSource>;

export const AgentSendBody = Type.Object(
  { message: Type.String({ description: 'The message delivered to the agent.' }) },
  { additionalProperties: false },
);
export type AgentSendBody = Static<typeof AgentSendBody>;

/** One tool the agent ran while answering. */
export const ToolCallView = Type.Object({
  tool_name: Type.String(),
  skill_id: Type.String(),
  duration_ms: Type.Integer({ minimum: 0 }),
  success: Type.Boolean(),
});
export type ToolCallView = Static<typeof ToolCallView>;

/** Reply of `send`. There is no `latency_ms` field (spec §Resources AgentResponse). */
export const AgentResponse = Type.Object({
  content: Type.String({ description: 'The agent reply.' }),
  tool_calls: Type.Array(ToolCallView, { description: 'Empty when no tool ran.' }),
  tokens_used: Type.Integer({ minimum: 0, description: 'Input plus output tokens over every model call of the reply.' }),
});
export type AgentResponse = Static<typeof AgentResponse>;

/** Request of `invoke` (spec §Resources InvocationContext). */
export const InvocationContext = Type.Object(
  {
    source: InvocationSource,
    message: Type.String({ description: 'Payload delivered to the agent.' }),
    idempotency_key: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'Dedup key, scoped to the agent; remembered [agents] idempotency_ttl_hours.' }),
    ),
    correlation_id: Type.String({ minLength: 1, maxLength: 256, description: 'Tracing correlation id, echoed in the result.' }),
    workflow_type: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'Used for transaction-budget gating and value-event classes.' }),
    ),
  },
  { additionalProperties: false },
);
export type InvocationContext = Static<typeof InvocationContext>;

/**
 * Reply of `invoke` (spec §Resources InvocationResult). `source` is the request's, echoed; the
 * wire form accepts any source the platform produces (Api, Chat, Workflow, Channel, Cron).
 */
export const InvocationResult = Type.Object({
  content: Type.String(),
  tokens_used: Type.Integer({ minimum: 0 }),
  duration_ms: Type.Integer({ minimum: 0 }),
  correlation_id: Type.String(),
  source: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())]),
});
export type InvocationResult = Static<typeof InvocationResult>;
