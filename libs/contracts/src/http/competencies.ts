import { Type, type Static } from 'typebox';
import { CompetencySetting } from '../packages.ts';

/**
 * HTTP bodies of spec §Endpoints "Competencies" and §Resources "Competency" (CompetencyInfo,
 * CompetencyDetail, DependencyReport). Wire names are the spec's; what the spec leaves open
 * (the `{Error}` status rule, `permissions` items, the drift element, the settings view) is
 * decided in docs/competencies.md.
 */

const CompetencyId = Type.String({ description: 'Competency id: its package name (DECISIONS D9).' });
const AgentId = Type.String({ description: 'Agent id (UUID).' });

export const CompetencyIdParams = Type.Object({ id: CompetencyId });
export type CompetencyIdParams = Static<typeof CompetencyIdParams>;

export const AgentCompetencyParams = Type.Object({ id: AgentId, cid: CompetencyId });
export type AgentCompetencyParams = Static<typeof AgentCompetencyParams>;

/** POST /agents/{agent_id}/competencies/{cid}/reset-schedule names the agent `agent_id` (spec). */
export const ResetScheduleParams = Type.Object({ agent_id: AgentId, cid: CompetencyId });
export type ResetScheduleParams = Static<typeof ResetScheduleParams>;

/** `Installed`, `Equipped`, or `{Error: <message>}` (docs/competencies.md "Status"). */
export const CompetencyStatus = Type.Union(
  [
    Type.Literal('Installed'),
    Type.Literal('Equipped'),
    Type.Object({ Error: Type.String({ description: 'What is wrong: the skills that are not installed.' }) }),
  ],
  {
    description:
      '`{Error}` when a skill it lists is missing; else `Equipped` when an agent equips it; else `Installed`.',
  },
);
export type CompetencyStatus = Static<typeof CompetencyStatus>;

export const SkillState = Type.Object({
  skill_id: Type.String(),
  state: Type.Union([Type.Literal('Installed'), Type.Literal('Missing')]),
});
export type SkillState = Static<typeof SkillState>;

export const CompetencyInfo = Type.Object({
  id: CompetencyId,
  name: Type.String(),
  version: Type.String(),
  status: CompetencyStatus,
  skills: Type.Array(Type.String(), { description: 'Skill ids (package names) the competency lists.' }),
});
export type CompetencyInfo = Static<typeof CompetencyInfo>;

export const CompetencyList = Type.Object({
  competencies: Type.Array(CompetencyInfo, { description: 'Sorted by id.' }),
});
export type CompetencyList = Static<typeof CompetencyList>;

/** An item of the manifest's `permissions`: the spec shows no shape; ours names what the competency reaches. */
export const CompetencyPermission = Type.Object({
  kind: Type.Union([Type.Literal('tool'), Type.Literal('contract'), Type.Literal('integration')]),
  name: Type.String(),
});
export type CompetencyPermission = Static<typeof CompetencyPermission>;

export const CompetencyManifest = Type.Object({
  id: CompetencyId,
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  system_prompt: Type.String({
    description: 'The COMPETENCY.md body, `{{settings.<key>}}` placeholders unrendered.',
  }),
  skills: Type.Array(Type.String()),
  permissions: Type.Array(CompetencyPermission, {
    description: 'Its `tools`, `contracts` and `integrations`, each named by kind.',
  }),
  settings: Type.Array(CompetencySetting),
  schedule: Type.Union([Type.String(), Type.Null()], {
    description: 'Cron expression (UTC); null when none.',
  }),
  schedule_action: Type.Union([Type.String(), Type.Null()], {
    description: 'Beyond the spec: the message each scheduled fire sends; null when no schedule.',
  }),
});
export type CompetencyManifest = Static<typeof CompetencyManifest>;

export const CompetencyDetail = Type.Object({
  id: CompetencyId,
  manifest: CompetencyManifest,
  status: CompetencyStatus,
  skill_states: Type.Array(SkillState),
});
export type CompetencyDetail = Static<typeof CompetencyDetail>;

export const DependencyReport = Type.Object({
  competency_id: CompetencyId,
  skills: Type.Array(SkillState),
  ready: Type.Boolean({ description: 'True when every skill is Installed.' }),
});
export type DependencyReport = Static<typeof DependencyReport>;

export const CompetencyInstallBody = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      description: 'Absolute path of a local competency package directory.',
    }),
  },
  { additionalProperties: false },
);
export type CompetencyInstallBody = Static<typeof CompetencyInstallBody>;

export const CompetencyInstalled = Type.Object({ id: CompetencyId });
export type CompetencyInstalled = Static<typeof CompetencyInstalled>;

/** The 410 of the deprecated `/competencies/{id}/config` routes, exactly the spec's fields. */
export const DeprecatedCompetencyConfig = Type.Object({
  deprecated: Type.Literal(true),
  message: Type.String(),
  values: Type.Object({}, { description: 'Always empty.' }),
  schema: Type.Array(Type.Unknown(), { maxItems: 0, description: 'Always empty.' }),
});
export type DeprecatedCompetencyConfig = Static<typeof DeprecatedCompetencyConfig>;

export const ActiveCompetencies = Type.Array(Type.Unknown(), {
  maxItems: 0,
  description: 'Always empty (spec).',
});

/** What a scheduled competency's cron binding should be, or is. */
export const ScheduleBinding = Type.Object({
  job_id: Type.Union([Type.String(), Type.Null()], { description: 'The cron job (null in `expected`).' }),
  expression: Type.String(),
  tz: Type.Union([Type.String(), Type.Null()]),
  message: Type.String(),
  enabled: Type.Boolean(),
});
export type ScheduleBinding = Static<typeof ScheduleBinding>;

export const DRIFT_PROBLEMS = ['missing', 'schedule_differs', 'action_differs', 'disabled', 'extra'] as const;
export type DriftProblem = (typeof DRIFT_PROBLEMS)[number];

/** An element of GET /competencies/schedule-health `drift` (docs/competencies.md "Schedule drift"). */
export const ScheduleDrift = Type.Object({
  agent_id: AgentId,
  competency_id: CompetencyId,
  problem: Type.Union([
    Type.Literal('missing'),
    Type.Literal('schedule_differs'),
    Type.Literal('action_differs'),
    Type.Literal('disabled'),
    Type.Literal('extra'),
  ]),
  expected: Type.Union([ScheduleBinding, Type.Null()], {
    description: 'From the manifest; null for `extra`.',
  }),
  actual: Type.Union([ScheduleBinding, Type.Null()], { description: 'The cron job; null for `missing`.' }),
});
export type ScheduleDrift = Static<typeof ScheduleDrift>;

export const ScheduleHealth = Type.Object({
  drift: Type.Array(ScheduleDrift, { description: 'Empty when every binding matches.' }),
});
export type ScheduleHealth = Static<typeof ScheduleHealth>;

export const AgentCompetencyList = Type.Object({
  competencies: Type.Array(CompetencyId, {
    description: 'Equip order: system prompts are concatenated in this order.',
  }),
});
export type AgentCompetencyList = Static<typeof AgentCompetencyList>;

export const CompetencyOrderBody = Type.Object(
  {
    order: Type.Array(CompetencyId, { description: 'Every equipped competency id once, in the new order.' }),
  },
  { additionalProperties: false },
);
export type CompetencyOrderBody = Static<typeof CompetencyOrderBody>;

/** PUT /agents/{id}/competencies/{cid}/config: setting key to value, sent as strings (spec). */
export const CompetencySettingsBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Setting key to its value as a string; Toggle also takes a JSON boolean, Number a JSON number.',
});
export type CompetencySettingsBody = Static<typeof CompetencySettingsBody>;

export const CompetencySettingsView = Type.Object({
  agent_id: AgentId,
  competency_id: CompetencyId,
  values: Type.Record(Type.String(), Type.String(), {
    description:
      'Every setting of the schema: the value set for this agent, else the default ("" when none).',
  }),
  schema: Type.Array(CompetencySetting),
});
export type CompetencySettingsView = Static<typeof CompetencySettingsView>;

export const CompetencyConfigUpdated = Type.Object({ status: Type.Literal('updated') });
export const CompetencyScheduleReset = Type.Object({ status: Type.Literal('reset') });
