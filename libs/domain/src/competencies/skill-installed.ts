import type { Store } from '@agent-platform/store';
import { catalogCollections } from '../catalog/catalog-records.ts';

/**
 * Whether a competency's skill counts as installed (spec §Competency `skill_states`): a skill
 * package in the catalog. The one place that answers it, so that bundled skills (shipped with
 * the platform, never in the catalog) can be counted here too.
 */
export type SkillInstalled = (skillId: string) => Promise<boolean>;

export function skillInstalled(store: Store): SkillInstalled {
  const { skills } = catalogCollections(store);
  return async (skillId) => (await skills.get(skillId)) !== null;
}
