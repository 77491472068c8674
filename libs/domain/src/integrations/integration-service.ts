import {
  Subjects,
  type IntegrationChangedMessage,
  type IntegrationInfo,
  type IntegrationReportedMessage,
  type IntegrationStatus,
  type IntegrationToolView,
  type PlatformConfig,
} from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import type { Store } from '@agent-platform/store';
import { catalogCollections, type IntegrationRecord } from '../catalog/catalog-records.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { PackageSource } from '../catalog/package-source.ts';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import type { Vault } from '../vault/vault.ts';
import { fleetStatus, fleetTools, isSupportedTransport } from './fleet-status.ts';
import { allFailed, isSettled, readFleetSnapshot, type FleetSnapshot } from './fleet-snapshot.ts';
import { installIntegration, integrationKeyName } from './install-integration.ts';
import { integrationStateCollections, type IntegrationDesiredRecord } from './integration-state.ts';
import { liveConsumers } from './live-consumers.ts';

/** The integration routes (spec §Integrations and contracts; docs/integrations.md). */
export interface IntegrationService {
  list(): Promise<IntegrationInfo[]>;
  /** `path`: the package directory; `key`: kept in the vault, handed to the server. Returns the integration id. */
  install(request: { path: string; key?: string }): Promise<string>;
  /** Uninstalls the package; 403 while live consumers depend on it. */
  remove(id: string): Promise<void>;
  connect(id: string): Promise<void>;
  disconnect(id: string): Promise<void>;
  reconnect(id: string): Promise<void>;
  status(id: string): Promise<IntegrationStatus>;
  tools(id: string): Promise<IntegrationToolView[]>;
}

export interface IntegrationServiceDeps {
  store: Store;
  bus: Bus;
  clock: Clock;
  catalog: CatalogService;
  source: PackageSource;
  vault: Vault;
  settings: () => PlatformConfig['integrations'];
  warn: (context: Record<string, unknown>, message: string) => void;
}

/**
 * The api side of integrations: it never runs a server itself. It records the desired state in
 * the store, tells every integration host on the bus, and reads back what the hosts report
 * (docs/integrations.md "Fleet"). Connect and reconnect wait (bounded by
 * `[integrations] connect_wait_secs`) until every live host has tried.
 */
export function createIntegrationService(deps: IntegrationServiceDeps): IntegrationService {
  const records = catalogCollections(deps.store);
  const state = integrationStateCollections(deps.store);

  const record = async (id: string): Promise<IntegrationRecord> => {
    const found = (await records.integrations.get(id))?.doc;
    if (found === undefined) throw Errors.notFound('integration', id);
    return found;
  };
  const refuseWhileConsumed = async (id: string, action: string): Promise<void> => {
    const consumers = await liveConsumers(deps.store, id);
    if (consumers.length > 0) throw Errors.integrationInUse(id, action, consumers);
  };
  const announce = async (id: string): Promise<void> => {
    await deps.bus
      .notify<IntegrationChangedMessage>(Subjects.integrationChanged, { integration_id: id })
      .catch((err: unknown) => {
        deps.warn(
          { err, integration_id: id },
          'could not announce an integration change; hosts pick it up at their next periodic reconcile',
        );
      });
  };
  const setDesired = async (
    id: string,
    change: (current: IntegrationDesiredRecord | null) => IntegrationDesiredRecord | null,
  ) => {
    const now = deps.clock.now().toISOString();
    const stored = await state.desired.update(id, (current) => {
      const next = change(current?.doc ?? null);
      return next === null ? null : { ...next, changed_at: now };
    });
    await announce(id);
    return stored?.doc ?? null;
  };
  const restore = async (id: string, previous: IntegrationDesiredRecord | null): Promise<void> => {
    if (previous === null) await state.desired.delete(id);
    else await state.desired.upsert(previous);
    await announce(id);
  };

  /** Starts (or restarts, with `bump`) the servers and waits for the fleet's answer. */
  const start = async (id: string, bump: boolean): Promise<void> => {
    const found = await record(id);
    if (!isSupportedTransport(found)) throw Errors.integrationUnsupported(id, found.transport);
    const previous = (await state.desired.get(id))?.doc ?? null;
    const next = await setDesired(id, (current) => ({
      id,
      desired: 'connected',
      // A new generation unless it already runs: rows left from an earlier run cannot answer for this one.
      generation: (current?.generation ?? 0) + (bump || current?.desired !== 'connected' ? 1 : 0),
      changed_at: '',
    }));
    if (next === null) return;
    const snapshot = await waitSettled(id, next.generation);
    if (!allFailed(snapshot, next.generation)) return;
    // Nothing keeps failing in the background: connect leaves the integration as it was, a
    // reconnect (or a connect of one already connected) leaves it Disconnected.
    if (previous?.desired === 'connected')
      await setDesired(id, (current) => (current === null ? null : { ...current, desired: 'disconnected' }));
    else await restore(id, previous);
    throw Errors.integrationStartFailed(id, failureText(snapshot, next.generation));
  };

  const waitSettled = async (id: string, generation: number): Promise<FleetSnapshot> => {
    const deadline = deps.clock.now().getTime() + deps.settings().connect_wait_secs * 1000;
    let wake: (() => void) | null = null;
    const subscription = await deps.bus.listen<IntegrationReportedMessage>(
      Subjects.integrationReported,
      (message) => {
        if (message.integration_id === id) wake?.();
      },
    );
    try {
      for (;;) {
        const snapshot = await readFleetSnapshot(state, id);
        const remaining = deadline - deps.clock.now().getTime();
        if (isSettled(snapshot, generation) || remaining <= 0) return snapshot;
        // The notification wakes this early; the poll covers a lost one.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(250, remaining));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    } finally {
      await subscription.drain();
    }
  };

  return {
    async list() {
      const all = await records.integrations.find({ orderBy: { field: 'id' } });
      return Promise.all(
        all.map(async ({ doc }) => ({
          id: doc.id,
          name: doc.name,
          description: doc.description,
          version: doc.version,
          transport: transportName(doc),
          status: await statusOf(doc),
        })),
      );
    },
    install: (request) =>
      installIntegration({ catalog: deps.catalog, source: deps.source, vault: deps.vault }, request),
    async remove(id) {
      await record(id);
      await refuseWhileConsumed(id, 'delete');
      await deps.catalog.uninstall(id);
      await state.desired.delete(id);
      await deps.vault.delete(integrationKeyName(id));
      await announce(id);
    },
    connect: (id) => start(id, false),
    async reconnect(id) {
      await record(id);
      await refuseWhileConsumed(id, 'reconnect');
      await start(id, true);
    },
    async disconnect(id) {
      await record(id);
      await refuseWhileConsumed(id, 'disconnect');
      await setDesired(id, (current) => ({
        id,
        desired: 'disconnected',
        generation: current?.generation ?? 0,
        changed_at: '',
      }));
    },
    status: async (id) => statusOf(await record(id)),
    async tools(id) {
      const found = await record(id);
      const snapshot = await readFleetSnapshot(state, id);
      const tools = fleetTools(snapshot.desired, snapshot.hosts, snapshot.rows);
      if (tools === null)
        throw Errors.integrationNotConnected(
          id,
          `its status is ${statusText(fleetStatus(found, snapshot.desired, snapshot.hosts, snapshot.rows))}; connect it to list its tools`,
        );
      return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema }));
    },
  };

  async function statusOf(found: IntegrationRecord): Promise<IntegrationStatus> {
    const snapshot = await readFleetSnapshot(state, found.id);
    return fleetStatus(found, snapshot.desired, snapshot.hosts, snapshot.rows);
  }
}

/** IntegrationInfo `transport`: `stdio` or `http` for an MCP server, else the adapter kind. */
export function transportName(record: Pick<IntegrationRecord, 'transport' | 'payload'>): string {
  if (record.transport !== 'mcp') return record.transport;
  return typeof (record.payload as { url?: unknown }).url === 'string' ? 'http' : 'stdio';
}

function statusText(status: IntegrationStatus): string {
  return typeof status === 'string' ? status : `Error (${status.Error})`;
}

function failureText(snapshot: FleetSnapshot, generation: number): string {
  const messages = new Set(
    snapshot.rows
      .filter((r) => r.generation === generation && typeof r.status === 'object')
      .map((r) => (r.status as { Error: string }).Error),
  );
  return [...messages].join('; ');
}
