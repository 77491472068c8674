import type { Store } from '@agent-platform/store';
import { findSkill } from './find-skill.ts';

/**
 * The bodies of the promptonly skills among `skillIds` (a competency's COMPETENCY.md `skills`,
 * in that order), installed or bundled, leaving out those already in `seen` and adding the rest
 * to it: a skill two competencies list joins the prompt once. A skill that is not available
 * (uninstalled since) is left out, like an uninstalled competency. Starlark skills give tools,
 * not prompt text (docs/skills.md).
 */
export async function promptonlySkillPrompts(store: Store, skillIds: readonly string[], seen: Set<string>): Promise<string[]> {
  const prompts: string[] = [];
  for (const id of skillIds) {
    if (seen.has(id)) continue;
    const found = await findSkill(store, id);
    if (found === null || found.skill.runtime !== 'promptonly') continue;
    seen.add(id);
    prompts.push(found.skill.body);
  }
  return prompts;
}
