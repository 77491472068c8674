import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of spec §Endpoints "Schedules and cron jobs" and §Resources "CronJob" (schedules
 * and cron jobs are the same records), plus the fire log (ours, docs/schedules.md). Wire names are
 * the spec's. Request bodies refuse unknown fields, except the spec's ignored `agent_id` on
 * POST /agents/{id}/schedules.
 */

const Timestamp = (description: string) => Type.String({ description: `${description} ISO 8601 UTC.` });
const NullableTimestamp = (description: string) => Type.Union([Timestamp(description), Type.Null()]);

/** `schedule` of a CronJob, tagged by `kind`. */
export const CronJobSchedule = Type.Union(
  [
    Type.Object({
      kind: Type.Literal('cron'),
      expr: Type.String({ description: 'Cron expression: 5 fields, or 6 with a leading seconds field.' }),
      tz: Type.Union([Type.String(), Type.Null()], {
        description: 'IANA zone the expression is read in; null = UTC.',
      }),
    }),
    Type.Object({
      kind: Type.Literal('every'),
      every_secs: Type.Integer({
        minimum: 1,
        description: 'Fires at every multiple of this period since the Unix epoch.',
      }),
    }),
    Type.Object({ kind: Type.Literal('at'), at: Timestamp('Fires once at this instant.') }),
  ],
  { description: 'When the job fires: `cron` {expr, tz}, `every` {every_secs} or `at` {at}.' },
);
export type CronJobSchedule = Static<typeof CronJobSchedule>;

/** `action` of a CronJob: always an agent turn with the schedule's prompt. */
export const CronJobAction = Type.Object({
  kind: Type.Literal('agent_turn'),
  message: Type.String({ description: 'The prompt sent to the agent at every fire.' }),
  model_override: Type.Union([Type.String(), Type.Null()], {
    description: 'Always null: agents use [models] default.',
  }),
  timeout_secs: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Always null: [agents] invocation_timeout_secs applies.',
  }),
});
export type CronJobAction = Static<typeof CronJobAction>;

/** spec §Resources "CronJob". */
export const CronJob = Type.Object({
  id: Type.String({ description: 'Schedule id (plain UUID).' }),
  agent_id: Type.String({ description: 'The agent the job fires at (UUID).' }),
  name: Type.String({
    description:
      '`schedule` when created through POST /agents/{id}/schedules, `cron` through POST /cron/jobs.',
  }),
  enabled: Type.Boolean(),
  schedule: CronJobSchedule,
  action: CronJobAction,
  created_at: Timestamp('Creation time.'),
  last_run: NullableTimestamp(
    'When the agent was last invoked for this job (a fired slot or POST /cron/jobs/{id}/run); null before the first.',
  ),
  next_run: NullableTimestamp(
    'The next slot of the schedule; null while disabled and once an `at` job has fired.',
  ),
});
export type CronJob = Static<typeof CronJob>;

export const ScheduleList = Type.Object({
  schedules: Type.Array(CronJob, { description: "The agent's jobs, oldest first." }),
});
export type ScheduleList = Static<typeof ScheduleList>;

export const CronJobList = Type.Object({
  jobs: Type.Array(CronJob, { description: 'Every job of every agent, oldest first.' }),
});
export type CronJobList = Static<typeof CronJobList>;

export const ScheduleIdParams = Type.Object({
  id: Type.String({ description: 'Schedule (cron job) id (UUID).' }),
});
export type ScheduleIdParams = Static<typeof ScheduleIdParams>;

/** What a slot whose previous fire is still running does: `skip` it (default) or fire anyway. */
export const OverlapPolicy = Type.Union([Type.Literal('skip'), Type.Literal('allow')], {
  description:
    'A slot that comes while the previous fire of this job still runs is skipped (`skip`, the default) or fired anyway (`allow`).',
});
export type OverlapPolicy = Static<typeof OverlapPolicy>;

/** The fields both create routes take. Exactly one of `expression`, `every_secs`, `at`. */
const whenFields = {
  expression: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        'Cron expression (5 fields, or 6 with a leading seconds field); required unless `every_secs` or `at` is given instead (exactly one of the three).',
    }),
  ),
  tz: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'IANA zone for `expression` (default UTC); only with `expression`.',
    }),
  ),
  every_secs: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 31_622_400,
      description:
        'Instead of `expression`: fire every N seconds (at multiples of N since the Unix epoch), at most 366 days.',
    }),
  ),
  at: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'Instead of `expression`: fire once at this ISO 8601 instant (one in the past fires at once).',
    }),
  ),
  prompt: Type.String({
    description: 'The message sent to the agent at every fire (at most [agents] max_message_bytes).',
  }),
  overlap: Type.Optional(OverlapPolicy),
};

/** POST /agents/{id}/schedules. */
export const ScheduleCreateBody = Type.Object(
  {
    ...whenFields,
    agent_id: Type.Optional(Type.Unknown({ description: 'Ignored: the path names the agent (spec).' })),
  },
  { additionalProperties: false },
);
export type ScheduleCreateBody = Static<typeof ScheduleCreateBody>;

/** POST /cron/jobs. A missing `agent_id` is the spec's flat 400 `{error}`. */
export const CronJobCreateBody = Type.Object(
  {
    agent_id: Type.String({
      description: 'The agent (UUID); missing: 400 with the flat body {"error": "..."} (spec).',
    }),
    ...whenFields,
  },
  { additionalProperties: false },
);
export type CronJobCreateBody = Static<typeof CronJobCreateBody>;

export const ScheduleCreated = Type.Object({ id: Type.String() });
export type ScheduleCreated = Static<typeof ScheduleCreated>;

export const CronJobCreated = Type.Object({ id: Type.String(), agent_id: Type.String() });
export type CronJobCreated = Static<typeof CronJobCreated>;

export const SchedulePaused = Type.Object({ status: Type.Literal('paused') });
export const ScheduleResumed = Type.Object({ status: Type.Literal('active') });

/**
 * PUT /cron/jobs/{id}/enable and PUT /conditions/jobs/{id}/enable; the body may be left out.
 * Absent `enabled` means true, applied by the route: a schema `default` would make the validator
 * clone the body to fill it in, and a deeply nested body then overflows the stack (the fuzz pass).
 */
export const JobEnableBody = Type.Object(
  { enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })) },
  { additionalProperties: false },
);
export type JobEnableBody = Static<typeof JobEnableBody>;

export const JobEnabledStatus = Type.Object({
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
});
export type JobEnabledStatus = Static<typeof JobEnabledStatus>;

/** What became of one slot (or one POST /cron/jobs/{id}/run), docs/schedules.md "Fire outcomes". */
export const FireOutcome = Type.Union(
  [
    Type.Literal('running'),
    Type.Literal('fired'),
    Type.Literal('duplicate'),
    Type.Literal('refused'),
    Type.Literal('failed'),
    Type.Literal('missed'),
    Type.Literal('skipped_overlap'),
    Type.Literal('skipped_paused'),
  ],
  {
    description:
      '`running` (invocation in flight or being retried), `fired`, `duplicate` (the slot had already fired), `refused` (agent unknown or Suspended, licence, ...; not retried), `failed` (retries used up), `missed` (slots that never fired), `skipped_overlap`, `skipped_paused`.',
  },
);
export type FireOutcome = Static<typeof FireOutcome>;

export const ScheduleFireView = Type.Object({
  slot_at: Timestamp(
    'The slot (for a manual run: when it was asked for; for `missed`: the first slot missed).',
  ),
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('manual')], {
    description: '`manual` for POST /cron/jobs/{id}/run.',
  }),
  outcome: FireOutcome,
  recorded_at: Timestamp('When the outcome was first recorded.'),
  finished_at: NullableTimestamp(
    'When the invocation ended; null while running and for outcomes without one.',
  ),
  late_ms: Type.Union([Type.Integer(), Type.Null()], {
    description: 'How long after its slot the fire started; null when it did not start.',
  }),
  attempts: Type.Integer({ minimum: 0, description: 'Invocation attempts made (retries included).' }),
  missed_count: Type.Integer({
    minimum: 0,
    description: 'For `missed`: how many slots, from slot_at to missed_until; else 0.',
  }),
  missed_until: NullableTimestamp('For `missed`: the last slot missed.'),
  reason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why it was refused, failed, missed or skipped (with the error category).',
  }),
});
export type ScheduleFireView = Static<typeof ScheduleFireView>;

export const ScheduleFireList = Type.Object({
  schedule_id: Type.String(),
  overlap: OverlapPolicy,
  missed_slots: Type.Integer({ minimum: 0, description: 'Slots this job has missed in total.' }),
  fires: Type.Array(ScheduleFireView, {
    description: 'Most recent first; kept [schedules] fire_history_days.',
  }),
});
export type ScheduleFireList = Static<typeof ScheduleFireList>;

export const ScheduleFiresQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 500,
        default: 50,
        description: 'How many fires, newest first (1-500, default 50).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ScheduleFiresQuery = Static<typeof ScheduleFiresQuery>;
