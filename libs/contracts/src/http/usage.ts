import { Type, type Static } from 'typebox';

/** Bodies of GET /usage, /usage/summary and /usage/value-events (spec §Resources Usage; docs/usage.md). */

export const UsageView = Type.Object({
  total_input_tokens: Type.Integer({ minimum: 0 }),
  total_output_tokens: Type.Integer({ minimum: 0 }),
  total_requests: Type.Integer({ minimum: 0 }),
  total_cost_usd: Type.Number({ minimum: 0 }),
});
export type UsageView = Static<typeof UsageView>;

export const UsageSummary = Type.Object({
  period: Type.Literal('all_time'),
  input_tokens: Type.Integer({ minimum: 0 }),
  output_tokens: Type.Integer({ minimum: 0 }),
  requests: Type.Integer({ minimum: 0 }),
  cost_usd: Type.Number({ minimum: 0 }),
});
export type UsageSummary = Static<typeof UsageSummary>;

/** The five value classes of spec §Usage, keys lower-case. */
export const VALUE_CLASSES = ['intake', 'servicing', 'recovery', 'underwriting', 'compliance'] as const;
export type ValueClass = (typeof VALUE_CLASSES)[number];

export const ValueEventsQuery = Type.Object(
  {
    window: Type.Integer({ minimum: 1, maximum: 3_155_760_000, default: 2592000, description: 'Seconds back from now; default 30 days, at most 100 years.' }),
    weeks: Type.Integer({ minimum: 1, maximum: 520, default: 12, description: 'Weekly buckets, the current week included.' }),
  },
  { additionalProperties: false },
);
export type ValueEventsQuery = Static<typeof ValueEventsQuery>;

const Count = Type.Integer({ minimum: 0 });

export const ValueEvents = Type.Object({
  window_secs: Type.Integer({ minimum: 1 }),
  since: Type.String({ description: 'ISO 8601 UTC: now minus window_secs.' }),
  until: Type.String({ description: 'ISO 8601 UTC: now.' }),
  total: Count,
  by_class: Type.Object(
    { intake: Count, servicing: Count, recovery: Count, underwriting: Count, compliance: Count },
    { description: 'Value events in the window by class; every class present.' },
  ),
  by_solution: Type.Record(Type.String(), Count, { description: 'Value events in the window by workflow type.' }),
  weekly: Type.Array(
    Type.Object({ week_start: Type.String({ description: 'Monday 00:00 UTC, ISO 8601.' }), count: Count }),
    { description: 'Oldest week first; the last is the current week.' },
  ),
});
export type ValueEvents = Static<typeof ValueEvents>;
