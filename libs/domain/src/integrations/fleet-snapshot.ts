import type {
  IntegrationStateCollections,
  IntegrationDesiredRecord,
  IntegrationHostRecord,
  IntegrationNodeRecord,
} from './integration-state.ts';
import { fleetTools } from './fleet-status.ts';
import type { IntegrationTool } from './integration-tools.ts';

/** What the fleet says about one integration right now (expired host and node rows are hidden by the store). */
export interface FleetSnapshot {
  desired: IntegrationDesiredRecord | null;
  hosts: IntegrationHostRecord[];
  rows: IntegrationNodeRecord[];
}

export async function readFleetSnapshot(
  state: IntegrationStateCollections,
  integrationId: string,
): Promise<FleetSnapshot> {
  const [desired, hosts, rows] = await Promise.all([
    state.desired.get(integrationId),
    state.hosts.find(),
    state.nodes.find({ where: { integration_id: integrationId } }),
  ]);
  return { desired: desired?.doc ?? null, hosts: hosts.map((h) => h.doc), rows: rows.map((r) => r.doc) };
}

/**
 * Every live host has reported on `generation` (Running or failed): a connect has its answer.
 * With no live host there is nothing to wait for.
 */
export function isSettled(snapshot: FleetSnapshot, generation: number): boolean {
  return snapshot.hosts.every((host) =>
    snapshot.rows.some((r) => r.node_id === host.id && r.generation === generation),
  );
}

/** Every live host reported a failure on `generation` (and there is at least one host). */
export function allFailed(snapshot: FleetSnapshot, generation: number): boolean {
  const live = new Set(snapshot.hosts.map((h) => h.id));
  const current = snapshot.rows.filter((r) => live.has(r.node_id) && r.generation === generation);
  return live.size > 0 && current.length >= live.size && current.every((r) => r.status !== 'Running');
}

/**
 * The tools of an integration as the fleet's hosts last reported them (its live tool list), or
 * null while no live host runs it: what the contract bind-time check reads (docs/tools.md).
 */
export async function fleetLiveTools(state: IntegrationStateCollections, integrationId: string): Promise<IntegrationTool[] | null> {
  const { desired, hosts, rows } = await readFleetSnapshot(state, integrationId);
  return fleetTools(desired, hosts, rows);
}
