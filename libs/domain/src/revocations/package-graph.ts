import type { PackageType } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import { AGENTS_COLLECTION } from '../agents/agent-record.ts';
import { catalogCollections } from '../catalog/catalog-records.ts';
import type { PlannedPackage } from '../catalog/install-plan.ts';

/**
 * What each installed package needs, as far as a revocation reaches (docs/catalog.md
 * "Revocations"): its `dependencies` (`[dependencies]` and a workflow's `agents_required`), an
 * agent's equipped competencies, and a competency's skills and integrations. A revoked package
 * taints every package that needs it, directly or through others.
 */
export interface PackageNode {
  name: string;
  type: PackageType;
  version: string;
  /** The agent or workflow UUID, else the package name. */
  entity_id: string;
  needs: string[];
}

export type PackageGraph = Map<string, PackageNode>;

/** The graph of what is installed now. */
export async function installedGraph(store: Store): Promise<PackageGraph> {
  const records = catalogCollections(store);
  const graph: PackageGraph = new Map();
  for (const { doc } of await records.packages.find()) {
    graph.set(doc.name, { name: doc.name, type: doc.type, version: doc.version, entity_id: doc.entity_id, needs: [...doc.dependencies] });
  }
  for (const { doc } of await records.competencies.find()) addNeeds(graph, doc.name, [...doc.skills, ...doc.integrations]);
  for (const { doc } of await store.collection<AgentRecord>(AGENTS_COLLECTION).find()) addNeeds(graph, doc.name, doc.equipped_competencies);
  return graph;
}

/** `graph` as it will be once `plan` is applied (install-time checks, before anything is written). */
export function withPlan(graph: PackageGraph, plan: readonly PlannedPackage[]): PackageGraph {
  const next: PackageGraph = new Map(graph);
  for (const step of plan) {
    const { payload, manifest } = step.pkg;
    const needs = [...step.dependencies];
    if (payload.file === 'AGENT.md') needs.push(...payload.data.competencies);
    if (payload.file === 'COMPETENCY.md') needs.push(...payload.data.skills, ...payload.data.integrations);
    const entity = graph.get(step.name)?.entity_id ?? step.name;
    next.set(step.name, { name: step.name, type: manifest.package.type, version: step.version, entity_id: entity, needs: unique(needs) });
  }
  return next;
}

/** Every package that needs `name`, directly or transitively, with `name` itself (when installed). */
export function dependentsOf(graph: PackageGraph, name: string): PackageNode[] {
  const reached = new Set<string>([name]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const node of graph.values()) {
      if (reached.has(node.name) || !node.needs.some((n) => reached.has(n))) continue;
      reached.add(node.name);
      grew = true;
    }
  }
  return [...reached].flatMap((n) => graph.get(n) ?? []).sort((a, b) => a.name.localeCompare(b.name));
}

/** The installed packages `root` needs, directly or transitively, with `root` itself. */
export function requirementsOf(graph: PackageGraph, root: string): PackageNode[] {
  const seen = new Set<string>();
  const stack = [root];
  while (stack.length > 0) {
    const name = stack.pop() as string;
    if (seen.has(name)) continue;
    seen.add(name);
    stack.push(...(graph.get(name)?.needs ?? []));
  }
  return [...seen].flatMap((n) => graph.get(n) ?? []);
}

function addNeeds(graph: PackageGraph, name: string, needs: readonly string[]): void {
  const node = graph.get(name);
  if (node !== undefined) node.needs = unique([...node.needs, ...needs]);
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}
