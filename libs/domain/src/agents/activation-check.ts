import { Errors } from '../errors/errors.ts';
import type { PlatformError } from '../errors/platform-error.ts';

/** What keeps an agent from becoming Running (spec §States "Agent"). */
export interface ActivationProblems {
  /** Equipped competencies that are not installed: their contracts cannot even be known. */
  missing_competencies: string[];
  /** Contracts required by an equipped competency that no installed integration implements. */
  missing_contracts: string[];
}

/**
 * The activation condition: every contract listed in the `contracts` of the agent's equipped
 * competencies has an installed integration whose `[implements.<contract>]` names it. Pure, so
 * that the catalog can run it against what an install is about to apply (`activate: true`).
 */
export function activationProblems(
  equipped: readonly string[],
  competencyContracts: (name: string) => readonly string[] | undefined,
  implemented: ReadonlySet<string>,
): ActivationProblems {
  const missing_competencies: string[] = [];
  const missing_contracts = new Set<string>();
  for (const name of equipped) {
    const contracts = competencyContracts(name);
    if (contracts === undefined) missing_competencies.push(name);
    else for (const contract of contracts) if (!implemented.has(contract)) missing_contracts.add(contract);
  }
  return { missing_competencies, missing_contracts: [...missing_contracts].sort() };
}

/** The `ActivationError` for `problems`, or null when there are none. */
export function activationError(
  agent: { id?: string; name: string },
  problems: ActivationProblems,
): PlatformError | null {
  const reasons: string[] = [];
  if (problems.missing_contracts.length > 0)
    reasons.push(
      `no installed integration implements the contract(s) ${problems.missing_contracts.join(', ')}`,
    );
  if (problems.missing_competencies.length > 0)
    reasons.push(`equipped competency(ies) ${problems.missing_competencies.join(', ')} not installed`);
  if (reasons.length === 0) return null;
  return Errors.activation(`agent ${agent.name} cannot be activated: ${reasons.join('; ')}`, {
    ...(agent.id === undefined ? {} : { agent_id: agent.id }),
    agent: agent.name,
    ...problems,
  });
}
