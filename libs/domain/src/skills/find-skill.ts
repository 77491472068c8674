import type { Store } from '@agent-platform/store';
import { catalogCollections, type SkillRecord } from '../catalog/catalog-records.ts';
import { bundledSkills } from './bundled-skills.ts';

export interface FoundSkill {
  skill: SkillRecord;
  /** Shipped with the platform rather than installed. */
  bundled: boolean;
}

/**
 * A skill by id (its package name): an installed one, else a bundled one; null when neither.
 * The two never share a name: installing a skill under a bundled name is refused.
 */
export async function findSkill(store: Store, id: string): Promise<FoundSkill | null> {
  const installed = await catalogCollections(store).skills.get(id);
  if (installed !== null) return { skill: installed.doc, bundled: false };
  const bundled = (await bundledSkills()).get(id);
  return bundled === undefined ? null : { skill: bundled, bundled: true };
}
