import type { AgentRecord } from '../agents/agent-record.ts';
import { Errors } from '../errors/errors.ts';

/**
 * PUT /agents/{id}/competencies/order: `order` must hold every equipped competency exactly once
 * (a reorder never equips or unequips: that happens only through the agent package, spec
 * §Competencies). Otherwise 400 naming what is missing, not equipped, or repeated.
 */
export function reorderedCompetencies(
  agent: Pick<AgentRecord, 'name' | 'equipped_competencies'>,
  order: readonly string[],
): string[] {
  const equipped = new Set(agent.equipped_competencies);
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const id of order) (seen.has(id) ? repeated : seen).add(id);
  const missing = agent.equipped_competencies.filter((id) => !seen.has(id));
  const notEquipped = [...seen].filter((id) => !equipped.has(id));
  if (missing.length === 0 && notEquipped.length === 0 && repeated.size === 0) return [...order];
  const parts = [
    missing.length > 0 ? `missing ${missing.join(', ')}` : '',
    notEquipped.length > 0 ? `not equipped ${notEquipped.join(', ')}` : '',
    repeated.size > 0 ? `repeated ${[...repeated].join(', ')}` : '',
  ].filter((part) => part !== '');
  throw Errors.validation(
    `order must list each competency agent ${agent.name} equips exactly once (${agent.equipped_competencies.join(', ') || 'none'}): ${parts.join('; ')}`,
    {
      field: 'order',
      equipped: [...agent.equipped_competencies],
      missing,
      not_equipped: notEquipped,
      repeated: [...repeated],
    },
  );
}
