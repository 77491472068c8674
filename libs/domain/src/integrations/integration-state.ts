import type { IntegrationStatus } from '@agent-platform/contracts';
import type { Collection, Store } from '@agent-platform/store';
import type { IntegrationTool } from './integration-tools.ts';

/**
 * The fleet's shared view of integrations (docs/integrations.md "Fleet"): the api writes what
 * should be (desired states), every integration host writes what is, on its node (node rows),
 * and that it is alive (host rows). Node and host rows expire: a worker killed with SIGKILL
 * stops refreshing them and drops out of the status within `[integrations] report_stale_secs`.
 */

/** One per integration ever connected; id = integration id. */
export interface IntegrationDesiredRecord {
  id: string;
  desired: 'connected' | 'disconnected';
  /** Grows by one on every reconnect: a host connected at an older generation restarts its server. */
  generation: number;
  changed_at: string;
}

/** One per (integration, node) while the node runs it or tries to; id = `<integration>@<node>`. */
export interface IntegrationNodeRecord {
  id: string;
  integration_id: string;
  node_id: string;
  /** The generation this row reports on. */
  generation: number;
  /** `Running`, or `{Error}` while it fails (it is restarted with backoff meanwhile). */
  status: IntegrationStatus;
  /** The live tool list on that node (empty unless Running). */
  tools: IntegrationTool[];
  reported_at: string;
  expires_at: string;
}

/** One per live integration host (agent worker or all-in-one process); id = node id. */
export interface IntegrationHostRecord {
  id: string;
  /** `agent-worker` or `platform`. */
  process: string;
  started_at: string;
  reported_at: string;
  expires_at: string;
}

export interface IntegrationStateCollections {
  desired: Collection<IntegrationDesiredRecord>;
  nodes: Collection<IntegrationNodeRecord>;
  hosts: Collection<IntegrationHostRecord>;
}

export const INTEGRATION_STATE_COLLECTIONS = {
  desired: 'integration_desired',
  nodes: 'integration_nodes',
  hosts: 'integration_hosts',
} as const;

export function integrationStateCollections(store: Store): IntegrationStateCollections {
  return {
    desired: store.collection<IntegrationDesiredRecord>(INTEGRATION_STATE_COLLECTIONS.desired),
    nodes: store.collection<IntegrationNodeRecord>(INTEGRATION_STATE_COLLECTIONS.nodes, {
      indexes: [{ field: 'integration_id' }, { field: 'node_id' }],
      ttlField: 'expires_at',
    }),
    hosts: store.collection<IntegrationHostRecord>(INTEGRATION_STATE_COLLECTIONS.hosts, {
      ttlField: 'expires_at',
    }),
  };
}

export const nodeRowId = (integrationId: string, nodeId: string): string => `${integrationId}@${nodeId}`;
