import type { Store } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import type { PlannedPackage } from '../catalog/install-plan.ts';
import { Errors, type RevokedPackage } from '../errors/errors.ts';
import { installedGraph, requirementsOf, withPlan, type PackageGraph } from './package-graph.ts';
import { revocationCollections, revocationId, revokedPackage, type RevocationRecord } from './revocation-records.ts';

/**
 * The refusals a revocation keeps in force until an operator overrides it (docs/catalog.md
 * "Revocations"): installing the revoked name@version, and activating an agent that is, needs or
 * equips a revoked package. Both run before anything is written.
 */

/** Revocations without an override, by `<name>@<version>`. */
export async function standingRevocations(store: Store): Promise<Map<string, RevocationRecord>> {
  const rows = await revocationCollections(store).revocations.find();
  return new Map(rows.filter(({ doc }) => doc.override === null).map(({ doc }) => [doc.id, doc]));
}

/**
 * Install check, for a plan from a local path or from the registry alike: every package of the
 * plan (the requested one and the dependencies it brings, reinstalls included) must not be a
 * standing revocation, else 400 `CatalogError`. With `activate`, each agent the plan leaves
 * Running must not need a revoked package either (one already installed, outside the plan), else
 * the `ActivationError` of a plain activation.
 */
export async function refuseRevokedInstall(store: Store, agents: AgentStore, plan: readonly PlannedPackage[], activate: boolean): Promise<void> {
  const standing = await standingRevocations(store);
  if (standing.size === 0) return;
  const hit = plan.flatMap((step) => standing.get(revocationId(step.name, step.version)) ?? []);
  if (hit.length > 0) throw Errors.packageRevoked(hit.map(revokedPackage));
  if (!activate) return;
  const graph = withPlan(await installedGraph(store), plan);
  for (const step of plan) {
    if (step.pkg.manifest.package.type !== 'agent-template') continue;
    const existing = await agents.getByName(step.name);
    if (existing?.state === 'Running') continue;
    const revoked = revokedBehind(graph, step.name, standing);
    if (revoked.length > 0) throw Errors.activationRevoked(existing === null ? { name: step.name } : { id: existing.id, name: step.name }, revoked);
  }
}

/** Activation check (POST /agents/{id}/activate): throws `ActivationError` naming each revoked package. */
export async function refuseRevokedActivation(store: Store, agent: Pick<AgentRecord, 'id' | 'name' | 'equipped_competencies'>): Promise<void> {
  const standing = await standingRevocations(store);
  if (standing.size === 0) return;
  const graph = await installedGraph(store);
  const node = graph.get(agent.name);
  // The agent's own competencies, as equipped now, count even without a package record.
  if (node !== undefined) node.needs = [...new Set([...node.needs, ...agent.equipped_competencies])];
  else graph.set(agent.name, { name: agent.name, type: 'agent-template', version: '', entity_id: agent.id, needs: [...agent.equipped_competencies] });
  const revoked = revokedBehind(graph, agent.name, standing);
  if (revoked.length > 0) throw Errors.activationRevoked({ id: agent.id, name: agent.name }, revoked);
}

/** The standing revocations among what `root` is or needs, by name. */
function revokedBehind(graph: PackageGraph, root: string, standing: ReadonlyMap<string, RevocationRecord>): RevokedPackage[] {
  return requirementsOf(graph, root)
    .flatMap((node) => standing.get(revocationId(node.name, node.version)) ?? [])
    .map(revokedPackage)
    .sort((a, b) => a.name.localeCompare(b.name));
}
