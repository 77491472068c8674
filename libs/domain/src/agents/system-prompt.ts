import type { Store } from '@agent-platform/store';
import { catalogCollections, type CompetencyRecord } from '../catalog/catalog-records.ts';
import { withSettings } from '../competencies/competency-prompt.ts';
import { promptonlySkillPrompts } from '../skills/skill-prompts.ts';
import type { AgentRecord } from './agent-record.ts';

/** An equipped competency with the bodies of its promptonly skills (docs/skills.md). */
export interface EquippedCompetency extends CompetencyRecord {
  skill_prompts: string[];
}

/**
 * The system prompt of an agent: the AGENT.md body, then each equipped competency's
 * COMPETENCY.md body in equip order (spec §Competencies: "system prompts are concatenated in
 * this order"), each followed by the SKILL.md bodies of its promptonly skills, separated by a
 * blank line. Surrounding whitespace of each part is dropped so the separator is exactly one
 * blank line.
 */
export function composeSystemPrompt(
  agent: Pick<AgentRecord, 'prompt'>,
  competencies: ReadonlyArray<Pick<CompetencyRecord, 'prompt'> & { skill_prompts?: readonly string[] }>,
): string {
  return [agent.prompt, ...competencies.flatMap((c) => [c.prompt, ...(c.skill_prompts ?? [])])]
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .join('\n\n');
}

/**
 * The installed competencies an agent equips, in equip order, each `prompt` with the agent's
 * settings rendered into its `{{settings.<key>}}` placeholders (docs/competencies.md "Settings in
 * the prompt") and with the bodies of its promptonly skills (docs/skills.md). One that is not
 * installed (it was uninstalled after activation) is left out rather than failing the invocation.
 */
export async function loadAgentCompetencies(
  store: Store,
  agent: Pick<AgentRecord, 'id' | 'equipped_competencies'>,
): Promise<EquippedCompetency[]> {
  const { competencies } = catalogCollections(store);
  const found: EquippedCompetency[] = [];
  const seen = new Set<string>();
  for (const name of agent.equipped_competencies) {
    const record = await competencies.get(name);
    if (record === null) continue;
    const competency = await withSettings(store, agent.id, record.doc);
    found.push({ ...competency, skill_prompts: await promptonlySkillPrompts(store, competency.skills, seen) });
  }
  return found;
}
