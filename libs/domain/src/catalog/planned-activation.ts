import { activationError, activationProblems } from '../agents/activation-check.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import type { CatalogCollections } from './catalog-records.ts';
import type { PlannedPackage } from './install-plan.ts';

/**
 * `activate: true` at install runs the activation contract check before anything is written,
 * against the catalog as it will be once the plan is applied: installed competencies and
 * integrations, overlaid with the plan's. A failure is the `ActivationError` of a plain
 * activation, and nothing is installed.
 */
export async function checkPlannedActivation(
  plan: readonly PlannedPackage[],
  records: CatalogCollections,
  agents: AgentStore,
): Promise<void> {
  const contracts = new Map<string, string[]>();
  for (const { doc } of await records.competencies.find()) contracts.set(doc.name, doc.contracts);
  const implementsBy = new Map<string, string[]>();
  for (const { doc } of await records.integrations.find())
    implementsBy.set(doc.name, Object.keys(doc.implements));
  for (const { pkg, name } of plan) {
    if (pkg.payload.file === 'COMPETENCY.md') contracts.set(name, pkg.payload.data.contracts);
    if (pkg.manifest.package.type === 'integration')
      implementsBy.set(name, Object.keys(pkg.manifest.implements));
  }
  const implemented = new Set([...implementsBy.values()].flat());
  for (const { pkg, name } of plan) {
    if (pkg.payload.file !== 'AGENT.md') continue;
    const existing = await agents.getByName(name);
    if (existing?.state === 'Running') continue;
    const problems = activationProblems(pkg.payload.data.competencies, (c) => contracts.get(c), implemented);
    const error = activationError(existing === null ? { name } : { id: existing.id, name }, problems);
    if (error !== null) throw error;
  }
}
