import type { Store } from '@agent-platform/store';
import { catalogCollections, type CompetencyRecord } from '../catalog/catalog-records.ts';
import { withSettings } from '../competencies/competency-prompt.ts';
import type { AgentRecord } from './agent-record.ts';

/**
 * The system prompt of an agent: the AGENT.md body, then each equipped competency's
 * COMPETENCY.md body in equip order (spec §Competencies: "system prompts are concatenated in
 * this order"), separated by a blank line. Surrounding whitespace of each part is dropped so the
 * separator is exactly one blank line.
 */
export function composeSystemPrompt(
  agent: Pick<AgentRecord, 'prompt'>,
  competencies: ReadonlyArray<Pick<CompetencyRecord, 'prompt'>>,
): string {
  return [agent.prompt, ...competencies.map((c) => c.prompt)]
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .join('\n\n');
}

/**
 * The installed competencies an agent equips, in equip order, each `prompt` with the agent's
 * settings rendered into its `{{settings.<key>}}` placeholders (docs/competencies.md "Settings in
 * the prompt"). One that is not installed (it was uninstalled after activation) is left out
 * rather than failing the invocation.
 */
export async function loadAgentCompetencies(
  store: Store,
  agent: Pick<AgentRecord, 'id' | 'equipped_competencies'>,
): Promise<CompetencyRecord[]> {
  const { competencies } = catalogCollections(store);
  const found: CompetencyRecord[] = [];
  for (const name of agent.equipped_competencies) {
    const record = await competencies.get(name);
    if (record !== null) found.push(await withSettings(store, agent.id, record.doc));
  }
  return found;
}
