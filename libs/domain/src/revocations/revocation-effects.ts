import type { Store } from '@agent-platform/store';
import type { AgentLifecycle } from '../agents/agent-lifecycle.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import { catalogCollections } from '../catalog/catalog-records.ts';
import { PlatformError } from '../errors/platform-error.ts';
import type { Clock } from '../time/clock.ts';
import { admissionOf, drainAdmission } from '../workflows/workflow-admissions.ts';
import { dependentsOf, installedGraph } from './package-graph.ts';

export interface RevocationEffectsDeps {
  store: Store;
  agents: AgentStore;
  /** The path of POST /agents/{id}/suspend: aborts in-flight work over the bus, emits `agent.suspended`. */
  lifecycle: Pick<AgentLifecycle, 'suspend'>;
  clock: Clock;
}

export interface RevocationEffects {
  /** Agents this revocation turned Suspended (those already Suspended are not listed). */
  agents_suspended: string[];
  /** Workflows whose admission it turned draining (runs in flight finish) or suspended. */
  workflows_drained: string[];
}

/**
 * What a revocation of `name` at its installed version does to the running platform
 * (docs/catalog.md "Revocations"). Every package that is or needs the revoked one (per
 * package-graph.ts) is affected:
 * - the agent of each affected agent template is suspended, like POST /agents/{id}/suspend (so
 *   agents equipping a revoked competency, or a competency with a revoked skill, are too);
 * - each affected workflow template stops admitting runs, like an uninstall: its runs in flight
 *   finish, new ones are refused. A workflow that is not itself affected but whose
 *   `agents_required` include a suspended agent keeps admitting: its runs fail at that agent's
 *   step with InvalidState (DECISIONS D9) until the agent is active again, which needs no
 *   reinstall of the workflow.
 * Idempotent: what is already Suspended or no longer admitting is left as it is, and not listed.
 */
export async function applyRevocationEffects(deps: RevocationEffectsDeps, name: string): Promise<RevocationEffects> {
  const affected = dependentsOf(await installedGraph(deps.store), name);
  const agents_suspended: string[] = [];
  const workflows_drained: string[] = [];
  for (const node of affected) {
    if (node.type === 'agent-template') {
      const agent = await deps.agents.getByName(node.name);
      if (agent === null || agent.state !== 'Running') continue;
      if (await suspended(deps, agent.id)) agents_suspended.push(agent.id);
    }
    if (node.type === 'workflow-template') {
      const workflow = (await catalogCollections(deps.store).workflows.get(node.entity_id))?.doc ?? null;
      if (workflow === null || workflow.uninstalled_at !== null) continue;
      const admission = await admissionOf(deps.store, workflow.id, workflow.version);
      if (admission !== null && admission !== 'active') continue;
      await drainAdmission(deps.store, workflow.id, workflow.version, deps.clock.now().toISOString());
      workflows_drained.push(workflow.id);
    }
  }
  return { agents_suspended, workflows_drained };
}

/** True when this call suspended it; false when someone else did first (an operator, a racing node). */
async function suspended(deps: RevocationEffectsDeps, id: string): Promise<boolean> {
  try {
    await deps.lifecycle.suspend(id);
    return true;
  } catch (error) {
    if (error instanceof PlatformError && (error.category === 'InvalidState' || error.category === 'NotFound')) return false;
    throw error;
  }
}
