import { Type, type Static } from 'typebox';
import { BUSINESS_KEY_PATTERN } from '../config.ts';

/**
 * Retention and legal holds (beyond the spec; docs/retention.md): GET /retention/status,
 * GET/POST /retention/holds, DELETE /retention/holds/{id}, POST /retention/sweep.
 */

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(
  schema: T,
  description?: string,
) => Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

export const BusinessKey = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: BUSINESS_KEY_PATTERN,
  description: 'A claim, policy or case number (1-128 printable characters), e.g. CLM-2026-000123.',
});

export const LegalHoldView = Type.Object({
  id: Type.String({
    description:
      'UUID for holds made through the api; `config:agent:<id>` or `config:business_key:<key>` for holds of [retention].',
  }),
  agent_id: Nullable(Type.String(), 'The agent under hold (null for a business-key hold).'),
  business_key: Nullable(Type.String(), 'The business key under hold (null for an agent hold).'),
  reason: Type.String(),
  source: Type.Union([Type.Literal('api'), Type.Literal('config')], {
    description: 'api: POST /retention/holds; config: [retention] hold_agents / hold_business_keys.',
  }),
  created_by: Nullable(Type.String(), 'Who placed it (null for config holds).'),
  created_at: Nullable(Type.String(), 'When it was placed (null for config holds).'),
});
export type LegalHoldView = Static<typeof LegalHoldView>;

export const LegalHoldList = Type.Object({ holds: Type.Array(LegalHoldView) });
export type LegalHoldList = Static<typeof LegalHoldList>;

/** POST /retention/holds: exactly one of `agent_id` and `business_key`, and why. */
export const CreateLegalHoldBody = Type.Object(
  {
    agent_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'Hold everything of this agent (it need not exist any more).',
      }),
    ),
    business_key: Type.Optional(BusinessKey),
    reason: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'Why (a matter or case reference): shown in the hold list and the audit trail.',
    }),
  },
  { additionalProperties: false },
);
export type CreateLegalHoldBody = Static<typeof CreateLegalHoldBody>;

export const LegalHoldParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

const ClassSweep = Type.Object({
  status: Type.Union([
    Type.Literal('kept_forever'),
    Type.Literal('done'),
    Type.Literal('failed'),
    Type.Literal('disabled'),
  ]),
  cutoff: Nullable(Type.String(), 'Items older than this were due (null when kept forever).'),
  deleted: Type.Integer({ minimum: 0, description: 'Items removed from the live store by this sweep.' }),
  held: Type.Integer({ minimum: 0, description: 'Expired items kept because a legal hold covers them.' }),
  archived_segments: Type.Optional(
    Type.Integer({ minimum: 0, description: 'audit: segments archived to the sink by this sweep.' }),
  ),
  archived_to_seq: Type.Optional(
    Nullable(Type.Integer(), 'audit: the newest archived seq after this sweep.'),
  ),
  held_from_seq: Type.Optional(
    Nullable(Type.Integer(), 'audit: the first expired entry a hold covers; the sweep stopped before it.'),
  ),
  error: Type.Optional(Type.String()),
});

export const SweepReport = Type.Object({
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('manual')]),
  period: Nullable(
    Type.Integer(),
    'The schedule period swept (now / sweep_interval_secs); null for a manual sweep.',
  ),
  node: Type.String({ description: 'The process that ran it.' }),
  started_at: Type.String(),
  finished_at: Type.String(),
  status: Type.Union([Type.Literal('completed'), Type.Literal('partial')], {
    description: 'partial: a class failed (its error says why); the others ran.',
  }),
  classes: Type.Object({ audit: ClassSweep, usage: ClassSweep, transcripts: ClassSweep, runs: ClassSweep }),
});
export type SweepReport = Static<typeof SweepReport>;

const ClassStatus = Type.Object({
  retention_days: Type.Integer({ minimum: 0, description: '0 = kept forever.' }),
  oldest_kept: Nullable(
    Type.String(),
    'Time of the oldest item in the live store (null when there is none).',
  ),
});

export const RetentionStatus = Type.Object({
  sweep_interval_secs: Type.Integer(),
  classes: Type.Object({
    audit: Type.Object({
      ...ClassStatus.properties,
      live_from_seq: Nullable(Type.Integer(), 'The first audit entry still in the live store.'),
      archive: Type.Object({
        sink: Nullable(
          Type.String(),
          'Where segments are archived ([audit.checkpoints]); null without a sink.',
        ),
        segments: Type.Integer({ minimum: 0 }),
        from_seq: Nullable(Type.Integer()),
        to_seq: Nullable(Type.Integer()),
        error: Type.Optional(Type.String({ description: 'The archive could not be read.' })),
      }),
      pending_segment: Type.Union(
        [Type.Object({ from_seq: Type.Integer(), to_seq: Type.Integer() }), Type.Null()],
        {
          description:
            'A segment a sweep started archiving and has not finished (the next sweep resumes it).',
        },
      ),
    }),
    usage: ClassStatus,
    transcripts: ClassStatus,
    runs: ClassStatus,
  }),
  holds: Type.Array(LegalHoldView),
  last_sweep: Type.Union([SweepReport, Type.Null()]),
});
export type RetentionStatus = Static<typeof RetentionStatus>;
