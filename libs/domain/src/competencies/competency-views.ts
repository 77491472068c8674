import type {
  CompetencyDetail,
  CompetencyInfo,
  CompetencyPermission,
  CompetencyStatus,
  DependencyReport,
  SkillState,
} from '@agent-platform/contracts';
import type { CompetencyRecord } from '../catalog/catalog-records.ts';
import type { SkillInstalled } from './skill-installed.ts';

/** The state of each skill the competency lists, in its order. */
export async function skillStates(
  record: CompetencyRecord,
  installed: SkillInstalled,
): Promise<SkillState[]> {
  return Promise.all(
    record.skills.map(async (skill_id) => ({
      skill_id,
      state: (await installed(skill_id)) ? ('Installed' as const) : ('Missing' as const),
    })),
  );
}

/**
 * docs/competencies.md "Status": `{Error}` when a listed skill is missing (what an operator must
 * fix wins over the rest), else `Equipped` while any agent equips it, else `Installed`.
 */
export function competencyStatus(skills: readonly SkillState[], equipped: boolean): CompetencyStatus {
  const missing = skills.filter((s) => s.state === 'Missing').map((s) => s.skill_id);
  if (missing.length > 0) return { Error: `skill(s) not installed: ${missing.join(', ')}` };
  return equipped ? 'Equipped' : 'Installed';
}

export function competencyInfo(
  record: CompetencyRecord,
  skills: readonly SkillState[],
  equipped: boolean,
): CompetencyInfo {
  return {
    id: record.id,
    name: record.name,
    version: record.version,
    status: competencyStatus(skills, equipped),
    skills: [...record.skills],
  };
}

export function competencyDetail(
  record: CompetencyRecord,
  skills: SkillState[],
  equipped: boolean,
): CompetencyDetail {
  const permissions: CompetencyPermission[] = [
    ...record.tools.map((name) => ({ kind: 'tool' as const, name })),
    ...record.contracts.map((name) => ({ kind: 'contract' as const, name })),
    ...record.integrations.map((name) => ({ kind: 'integration' as const, name })),
  ];
  return {
    id: record.id,
    manifest: {
      id: record.id,
      name: record.name,
      version: record.version,
      description: record.description,
      system_prompt: record.prompt,
      skills: [...record.skills],
      permissions,
      settings: record.settings,
      schedule: record.schedule,
      schedule_action: record.schedule === null ? null : record.schedule_action,
    },
    status: competencyStatus(skills, equipped),
    skill_states: skills,
  };
}

export function dependencyReport(record: CompetencyRecord, skills: SkillState[]): DependencyReport {
  return { competency_id: record.id, skills, ready: skills.every((s) => s.state === 'Installed') };
}
