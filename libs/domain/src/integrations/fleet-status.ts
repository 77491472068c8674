import type { IntegrationStatus } from '@agent-platform/contracts';
import type { IntegrationRecord } from '../catalog/catalog-records.ts';
import type {
  IntegrationDesiredRecord,
  IntegrationHostRecord,
  IntegrationNodeRecord,
} from './integration-state.ts';

/** Transports this version can run; a SOAP adapter installs but stays `Disabled`. */
export function isSupportedTransport(record: Pick<IntegrationRecord, 'transport'>): boolean {
  return record.transport !== 'soap';
}

/**
 * The one status of an integration across the fleet (docs/integrations.md "Status"), from the
 * desired state and the fresh rows of the live hosts (expired rows are already hidden):
 * - `Disabled`: a SOAP adapter (not supported by this version; connect is refused);
 * - `Installed`: never connected; `Disconnected`: disconnected since;
 * - connected and every live host runs the current generation: `Running`;
 * - connected and a live host reports a failure: `{Error: "<k> of <n> agent workers: <message>"}`
 *   (just the message when there is one host, as in the all-in-one);
 * - connected and no host alive: `{Error: "no agent worker is running..."}`;
 * - connected and some host has not reported yet: `{Error: "connecting: running on r of n ..."}`.
 */
export function fleetStatus(
  record: Pick<IntegrationRecord, 'transport'>,
  desired: IntegrationDesiredRecord | null,
  hosts: readonly IntegrationHostRecord[],
  rows: readonly IntegrationNodeRecord[],
): IntegrationStatus {
  if (!isSupportedTransport(record)) return 'Disabled';
  if (desired === null) return 'Installed';
  if (desired.desired === 'disconnected') return 'Disconnected';
  const live = new Set(hosts.map((h) => h.id));
  if (live.size === 0)
    return {
      Error: 'no agent worker is running to connect it (none reported recently); it connects when one starts',
    };
  const current = rows.filter((r) => live.has(r.node_id) && r.generation === desired.generation);
  const failed = current.filter((r) => r.status !== 'Running');
  if (failed.length > 0) {
    const message = errorMessage(failed[0]!.status);
    return {
      Error: live.size === 1 ? message : `${failed.length} of ${live.size} agent workers: ${message}`,
    };
  }
  const running = current.length;
  if (running >= live.size) return 'Running';
  return { Error: `connecting: running on ${running} of ${live.size} agent workers` };
}

function errorMessage(status: IntegrationStatus): string {
  return typeof status === 'object' ? status.Error : String(status);
}

/** The tool list a Running host of the current generation reports (they run the same server). */
export function fleetTools(
  desired: IntegrationDesiredRecord | null,
  hosts: readonly IntegrationHostRecord[],
  rows: readonly IntegrationNodeRecord[],
): IntegrationNodeRecord['tools'] | null {
  if (desired?.desired !== 'connected') return null;
  const live = new Set(hosts.map((h) => h.id));
  const row = rows.find(
    (r) => live.has(r.node_id) && r.generation === desired.generation && r.status === 'Running',
  );
  return row?.tools ?? null;
}
