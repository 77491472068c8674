import { SKILL_RUNTIME_NAMES, type SkillDetail, type SkillInfo, type SkillToolView } from '@agent-platform/contracts';
import type { SkillRecord } from '../catalog/catalog-records.ts';

/** The tools of a skill as the model and GET /skills/{id} see them (docs/skills.md). */
export function skillToolViews(skill: Pick<SkillRecord, 'tools' | 'description'>): SkillToolView[] {
  return skill.tools.map((tool) => ({
    name: tool.name,
    description: tool.description ?? skill.description,
    input_schema: tool.input_schema ?? { type: 'object' },
  }));
}

/** Spec §Skill SkillInfo. */
export function skillInfo(skill: SkillRecord, bundled: boolean): SkillInfo {
  return {
    id: skill.id,
    name: skill.name,
    version: skill.version,
    tools: skill.tools.map((t) => t.name),
    runtime: SKILL_RUNTIME_NAMES[skill.runtime],
    bundled,
  };
}

/** Spec §Skill SkillDetail, plus `bundled`. `starlarkAvailable`: this node has the interpreter. */
export function skillDetail(skill: SkillRecord, bundled: boolean, starlarkAvailable: boolean): SkillDetail {
  const starlark = skill.runtime === 'starlark';
  return {
    id: skill.id,
    name: skill.name,
    version: skill.version,
    description: skill.description,
    tools: skillToolViews(skill),
    runtime: SKILL_RUNTIME_NAMES[skill.runtime],
    requirements: {
      interpreter: starlark ? 'starlark' : null,
      interpreter_available: starlark ? starlarkAvailable : true,
      entry: skill.entry,
    },
    bundled,
  };
}
