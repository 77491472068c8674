import type { Store } from '@agent-platform/store';
import { findSkill } from '../skills/find-skill.ts';

/**
 * Whether a competency's skill counts as installed (spec §Competency `skill_states`): a skill
 * package in the catalog, or a bundled skill (shipped with the platform, never in the catalog;
 * docs/skills.md "Bundled skills"). The one place that answers it.
 */
export type SkillInstalled = (skillId: string) => Promise<boolean>;

export function skillInstalled(store: Store): SkillInstalled {
  return async (skillId) => (await findSkill(store, skillId)) !== null;
}
