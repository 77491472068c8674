import {
  Subjects,
  type IntegrationChangedMessage,
  type IntegrationReportedMessage,
  type IntegrationStatus,
  type PlatformConfig,
} from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';
import type { Store } from '@agent-platform/store';
import { catalogCollections, type IntegrationRecord } from '../catalog/catalog-records.ts';
import type { Clock } from '../time/clock.ts';
import type { Vault } from '../vault/vault.ts';
import { isSupportedTransport } from './fleet-status.ts';
import { integrationKeyName } from './install-integration.ts';
import type { IntegrationConnector, IntegrationSpec } from './integration-connector.ts';
import { callThrough } from './host-call.ts';
import { integrationStateCollections, nodeRowId, type IntegrationNodeRecord } from './integration-state.ts';
import { startSupervisor, type IntegrationSupervisor } from './integration-supervisor.ts';
import type { IntegrationTool, IntegrationTools } from './integration-tools.ts';
import { Errors } from '../errors/errors.ts';

export interface IntegrationHostDeps {
  store: Store;
  bus: Bus;
  clock: Clock;
  connector: IntegrationConnector;
  /** Resolves integration keys; the key is read at each (re)start. */
  vault: Pick<Vault, 'resolve'>;
  /** Unique per process (host name, pid and a random part): the fleet status names nodes by it. */
  nodeId: string;
  /** `agent-worker` or `platform`. */
  process: string;
  settings: () => PlatformConfig['integrations'];
  log: (level: 'info' | 'warn', context: Record<string, unknown>, message: string) => void;
}

/** The integration runtime of one process where agents run; the tool loop reaches it as IntegrationTools. */
export interface IntegrationHost extends IntegrationTools {
  readonly name: string;
  start(): Promise<void>;
  /** Closes every connection (stdio servers end) and removes this node's rows. */
  stop(): Promise<void>;
  /** Brings the connections here in line with the desired states now. */
  reconcile(): Promise<void>;
}

/**
 * Keeps this process's connections equal to the fleet's desired states (docs/integrations.md
 * "Fleet"): one connection per connected integration, restarted with backoff when it fails. It
 * reconciles at start, on every `integrations.changed` notification and every
 * `report_interval_secs` (the fallback for a lost notification), and each time refreshes its
 * host row and node rows (status and live tool list), which expire after `report_stale_secs`
 * so that a killed process drops out of the fleet status by itself.
 */
export function createIntegrationHost(deps: IntegrationHostDeps): IntegrationHost {
  const records = catalogCollections(deps.store);
  const state = integrationStateCollections(deps.store);
  const supervisors = new Map<string, IntegrationSupervisor>();
  const startedAt = deps.clock.now().toISOString();
  let subscription: Subscription | null = null;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const expiry = (): { reported_at: string; expires_at: string } => {
    const now = deps.clock.now();
    return {
      reported_at: now.toISOString(),
      expires_at: new Date(now.getTime() + deps.settings().report_stale_secs * 1000).toISOString(),
    };
  };
  const writeRow = async (
    id: string,
    generation: number,
    status: IntegrationStatus,
    tools: IntegrationTool[],
  ): Promise<void> => {
    const row: IntegrationNodeRecord = {
      id: nodeRowId(id, deps.nodeId),
      integration_id: id,
      node_id: deps.nodeId,
      generation,
      status,
      tools,
      ...expiry(),
    };
    await state.nodes.upsert(row);
    await deps.bus
      .notify<IntegrationReportedMessage>(Subjects.integrationReported, {
        integration_id: id,
        node_id: deps.nodeId,
      })
      .catch(() => undefined);
  };
  const writeHostRow = async (): Promise<void> => {
    await state.hosts.upsert({ id: deps.nodeId, process: deps.process, started_at: startedAt, ...expiry() });
  };

  const specOf = async (record: IntegrationRecord): Promise<IntegrationSpec> => {
    const key = await deps.vault.resolve(integrationKeyName(record.id));
    return record.transport === 'mcp'
      ? { id: record.id, transport: 'mcp', payload: record.payload as never, key }
      : { id: record.id, transport: record.transport, payload: record.payload as never, key };
  };

  const open = (record: IntegrationRecord, generation: number): void => {
    supervisors.set(
      record.id,
      startSupervisor({
        integrationId: record.id,
        generation,
        fingerprint: fingerprint(record),
        spec: () => specOf(record),
        connector: deps.connector,
        settings: deps.settings,
        clock: deps.clock,
        log: deps.log,
        report: (status, tools) =>
          writeRow(record.id, generation, status, tools).catch((err: unknown) =>
            deps.log('warn', { err, integration_id: record.id }, 'could not write an integration status row'),
          ),
      }),
    );
  };
  const close = async (id: string): Promise<void> => {
    const supervisor = supervisors.get(id);
    supervisors.delete(id);
    await supervisor?.stop();
    await state.nodes.delete(nodeRowId(id, deps.nodeId));
  };

  const reconcileOnce = async (): Promise<void> => {
    const [desired, installed] = await Promise.all([state.desired.find(), records.integrations.find()]);
    const byId = new Map(installed.map(({ doc }) => [doc.id, doc]));
    const wanted = new Map<string, { record: IntegrationRecord; generation: number }>();
    for (const { doc } of desired) {
      const record = byId.get(doc.id);
      if (doc.desired === 'connected' && record !== undefined && isSupportedTransport(record))
        wanted.set(doc.id, { record, generation: doc.generation });
    }
    for (const [id, supervisor] of [...supervisors]) {
      const want = wanted.get(id);
      if (
        want === undefined ||
        want.generation !== supervisor.generation ||
        fingerprint(want.record) !== supervisor.fingerprint
      )
        await close(id);
    }
    for (const [id, want] of wanted) if (!stopped && !supervisors.has(id)) open(want.record, want.generation);
  };

  /** One reconcile at a time; a request during one runs another right after (it may carry news). */
  const reconcile = async (): Promise<void> => {
    if (running !== null) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await reconcileOnce().catch((err: unknown) =>
          deps.log('warn', { err }, 'integration reconcile failed; retrying at the next interval'),
        );
      } while (again && !stopped);
    })();
    try {
      await running;
    } finally {
      running = null;
    }
  };

  const tick = async (): Promise<void> => {
    await writeHostRow().catch((err: unknown) =>
      deps.log('warn', { err }, 'could not refresh the integration host row'),
    );
    await reconcile();
    await Promise.all(
      [...supervisors].map(async ([id, supervisor]) => {
        await supervisor.check();
        // A reconcile may have closed it meanwhile: its row is gone and must stay gone. A first
        // attempt still under way has nothing to say yet (a connect waits for its outcome).
        const status = supervisor.status();
        if (supervisors.get(id) === supervisor && status !== null)
          await writeRow(id, supervisor.generation, status, supervisor.tools()).catch(() => undefined);
      }),
    );
  };

  return {
    name: 'integration-host',
    async start() {
      stopped = false;
      await writeHostRow();
      subscription = await deps.bus.listen<IntegrationChangedMessage>(
        Subjects.integrationChanged,
        () => void reconcile(),
      );
      await reconcile();
      const schedule = (): void => {
        timer = setTimeout(() => {
          void tick().finally(() => {
            if (!stopped) schedule();
          });
        }, deps.settings().report_interval_secs * 1000);
      };
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await subscription?.drain();
      subscription = null;
      await running;
      await Promise.all([...supervisors.keys()].map((id) => close(id)));
      await state.hosts.delete(deps.nodeId).catch(() => false);
    },
    reconcile,
    async tools(integrationId) {
      const supervisor = supervisors.get(integrationId);
      if (supervisor === undefined)
        throw Errors.integrationNotConnected(integrationId, 'it is not connected on this worker');
      // Its first connection (this process just started) is under way: an invocation that needs
      // its tools waits for the outcome, within `connect_timeout_secs`, rather than running without
      // them (a step resumed right after a restart would otherwise meet a journal it cannot match).
      if (supervisor.status() === null) await within(supervisor.firstAttempt, deps.settings().connect_timeout_secs * 1000);
      if (supervisor.connection() === null)
        throw Errors.integrationNotConnected(integrationId, describe(supervisor.status()));
      return supervisor.tools();
    },
    call: (integrationId, tool, args, options) =>
      callThrough(supervisors.get(integrationId), {
        integrationId,
        tool,
        args,
        options,
        settings: deps.settings,
      }),
  };
}

/** Resolves when `promise` does or after `ms`, whichever comes first. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function describe(status: IntegrationStatus | null): string {
  if (status === null) return 'its server is starting';
  return typeof status === 'object' ? status.Error : status;
}

/** What a connection depends on in the record: a change (an upgrade) restarts it. */
function fingerprint(record: IntegrationRecord): string {
  return `${record.version}\n${JSON.stringify(record.payload)}`;
}
