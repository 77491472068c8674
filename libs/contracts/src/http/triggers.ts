import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of spec §Endpoints "Triggers" and §Resources "Trigger", plus the fire log (ours,
 * docs/events.md "Fire records"). The keys a `pattern` may hold and the filters inside each are
 * checked by the domain (libs/domain/src/events/trigger-pattern.ts), which names a bad one in a 400.
 */

export const TriggerPattern = Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
  description:
    'Event pattern: one or more keys (`lifecycle`, `agent_spawned`, or one per event kind such as `invocation_failed`), each an object of optional filters; the trigger fires when any key matches (docs/events.md).',
});
export type TriggerPattern = Static<typeof TriggerPattern>;

/** spec §Resources "Trigger", plus `created_at`. */
export const Trigger = Type.Object({
  id: Type.String({ description: 'Trigger id (UUID).' }),
  agent_id: Type.String({ description: 'The agent a match invokes (UUID).' }),
  pattern: TriggerPattern,
  prompt_template: Type.String({ description: 'The message sent to the agent; `{{event}}` is replaced by the event as JSON.' }),
  max_fires: Type.Integer({ minimum: 0, description: 'At most this many fires; 0 = unlimited.' }),
  fires_count: Type.Integer({ minimum: 0, description: 'How many times the trigger fired (invoked its agent).' }),
  created_at: Type.String({ description: 'Creation time, ISO 8601 UTC (beyond the spec).' }),
});
export type Trigger = Static<typeof Trigger>;

export const TriggerList = Type.Object({
  triggers: Type.Array(Trigger, { description: 'Oldest first.' }),
});
export type TriggerList = Static<typeof TriggerList>;

export const TriggerIdParams = Type.Object({ id: Type.String({ description: 'Trigger id (UUID).' }) });
export type TriggerIdParams = Static<typeof TriggerIdParams>;

/** The prompt when the create body gives none (spec). */
export const DEFAULT_PROMPT_TEMPLATE = 'Event: {{event}}';

/** POST /agents/{id}/triggers. */
export const TriggerCreateBody = Type.Object(
  {
    pattern: TriggerPattern,
    prompt_template: Type.Optional(
      Type.String({ minLength: 1, maxLength: 65_536, description: `Default \`${DEFAULT_PROMPT_TEMPLATE}\`.` }),
    ),
    max_fires: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'Default 0 (unlimited).' })),
  },
  { additionalProperties: false },
);
export type TriggerCreateBody = Static<typeof TriggerCreateBody>;

export const TriggerCreated = Type.Object({ id: Type.String() });
export type TriggerCreated = Static<typeof TriggerCreated>;

/** What became of one event that matched a trigger (docs/events.md "Fire records"). */
export const TriggerFireOutcome = Type.Union(
  [
    Type.Literal('running'),
    Type.Literal('fired'),
    Type.Literal('failed'),
    Type.Literal('skipped_suspended'),
    Type.Literal('skipped_max_fires'),
    Type.Literal('skipped_loop'),
  ],
  {
    description:
      '`running` (the invocation is on its way), `fired` (the agent answered), `failed` (the invocation failed), `skipped_suspended` (the agent was Suspended), `skipped_max_fires` (another event took the last fire), `skipped_loop` (the event was caused by this trigger, docs/events.md "Loops").',
  },
);
export type TriggerFireOutcome = Static<typeof TriggerFireOutcome>;

export const TriggerFireView = Type.Object({
  event_id: Type.String(),
  event_kind: Type.String(),
  outcome: TriggerFireOutcome,
  at: Type.String({ description: 'When the event was matched, ISO 8601 UTC.' }),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed or was skipped.' }),
});
export type TriggerFireView = Static<typeof TriggerFireView>;

export const TriggerFireList = Type.Object({ fires: Type.Array(TriggerFireView, { description: 'Newest first.' }) });
export type TriggerFireList = Static<typeof TriggerFireList>;

export const TriggerFiresQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Default 50.' })) },
  { additionalProperties: false },
);
export type TriggerFiresQuery = Static<typeof TriggerFiresQuery>;

/** Invocation source of a trigger fire (InvocationSourceWire): `{"Trigger": {...}}`. */
export const TriggerSource = Type.Object({
  Trigger: Type.Object({
    trigger_id: Type.String(),
    event_id: Type.String(),
    event_kind: Type.String(),
    chain: Type.Array(Type.String(), { description: 'The trigger chain, this trigger last (docs/events.md "Loops").' }),
  }),
});
export type TriggerSource = Static<typeof TriggerSource>;
