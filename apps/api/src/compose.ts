import { checkpointKeyPath, loadCheckpointSigner } from './audit/load-checkpoint-signer.ts';
import { openCheckpointSink } from './audit/open-checkpoint-sink.ts';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { agreeWithFleetAtBoot, createConfigHolder, licenceClaim, loadVaultKey, signingKeyClaim, vaultKeyClaim, type LoadedConfig } from '@agent-platform/config';
import {
  checkArchivedPackages,
  createAgentLifecycle,
  createAgentStats,
  createAgentStore,
  createAuditCheckpoints,
  createAuditTrail,
  createRetentionService,
  createAuthBackoff,
  createCatalogService,
  createEquipEffects,
  competencyEquipEffects,
  contractBindingEffect,
  createIntegrationService,
  fleetLiveTools,
  integrationStateCollections,
  createKeyService,
  createMemoryStore,
  createScheduleService,
  createEventPublisher,
  storedEventInterest,
  createGatewayTraffic,
  createGatewayViews,
  createPrivacyAudit,
  createRevocationService,
  createTriggerService,
  createSessionStore,
  createSkillService,
  createTranscriptStore,
  starlarkLimitsOf,
  createVault,
  createWebhookSecrets,
  createWebhookService,
  createRunBus,
  createWorkflowService,
  directoryPackageSource,
  forgetFleetAgreement,
  systemClock,
  type Clock,
  type StarlarkLimits,
  PlatformError,
  type WorkflowService,
} from '@agent-platform/domain';
import { channelRunReplies, createChannelKinds, createChannelService, type ChannelKind } from '@agent-platform/channels';
import { createLogger, createMetrics, platformInstruments } from '@agent-platform/observability';
import { createProviders } from '@agent-platform/providers';
import { faultPointsFromEnv, openEngines, platformVersion } from '@agent-platform/engines';
import { createBackupService } from '@agent-platform/backup';
import { storeSnapshotsOf, type Store } from '@agent-platform/store';
import { afterRestore } from './backup/after-restore.ts';
import { backupKeyPath, loadBackupSigner, trustedBackupKeys } from './backup/backup-keys.ts';
import { guardedPoster } from '@agent-platform/net';
import { loadStarlarkRunner } from '@agent-platform/starlark';
import { registryAccessOf } from './compose-registry.ts';
import type { ApiDeps } from './deps.ts';
import { instrumentKeys, instrumentLicence, instrumentVault } from './instrument.ts';
import { warnIfMessagesOutgrowTheBus } from './invocation/agent-invoker.ts';
import { openLicence } from './open-licence.ts';
import { openCompliance } from './compliance/open-compliance.ts';

export interface ComposeApiOptions {
  env: Record<string, string | undefined>;
  /** Where log lines go besides the in-memory buffer; default stdout. */
  logDestination?: NodeJS.WritableStream | 'stdout' | 'silent';
  clock?: Clock;
  /** Directory relative paths were resolved against (reload needs the same); default cwd. */
  cwd?: string;
  /** Bound late by main.ts: POST /shutdown calls it once the 202 is on the wire. */
  requestShutdown?: () => void;
  /** Which process this is (`api`, `platform`): the NATS connection name. */
  processName?: string;
  /** Test instrument: wraps the store the whole composition uses (OpenEnginesOptions.decorateStore). */
  decorateStore?: (store: Store) => Store;
  /** The channel kinds POST /channels accepts; default every kind of libs/channels. */
  channelKinds?: readonly ChannelKind[];
}

async function workflowExists(workflows: WorkflowService, id: string): Promise<boolean> {
  try {
    await workflows.get(id);
    return true;
  } catch (error) {
    if (error instanceof PlatformError && error.category === 'NotFound') return false;
    throw error;
  }
}

export interface ComposedApi {
  deps: ApiDeps;
  /** Closes the engines (queue, bus, store) in reverse order of opening. */
  close(): Promise<void>;
}

/**
 * The api's composition root. Opens the engines `[runtime]` names (`openEngines`: embedded files
 * under `data_dir`, or NATS, MongoDB and Redis), loads the vault key and the licence, builds the
 * domain services over them and wires metrics around them. Every piece of state that must be the
 * same on every api node lives in the store (docs/architecture.md, "Fleet").
 */
export async function composeApi(loaded: LoadedConfig, options: ComposeApiOptions): Promise<ComposedApi> {
  const config = createConfigHolder(loaded, { env: options.env, cwd: options.cwd ?? process.cwd() });
  const boot = config.current();
  const clock = options.clock ?? systemClock;
  const { logger, buffer } = createLogger({
    level: boot.logging.level,
    bufferLines: boot.logging.buffer_lines,
    destination: options.logDestination ?? 'stdout',
  });
  const metrics = createMetrics();
  const dataDir = boot.storage.data_dir;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });

  const engines = await openEngines(boot, {
    clock,
    logger,
    dataDir,
    env: options.env,
    ...(options.processName === undefined ? {} : { processName: options.processName }),
    ...(options.decorateStore === undefined ? {} : { decorateStore: options.decorateStore }),
  });
  const { store, bus, queue } = engines;
  // The interpreter npm install built (null on a machine without Go): install checks of starlark
  // skills here, tool calls in the agent worker of the all-in-one (docs/skills.md).
  const starlark = loadStarlarkRunner();
  let closeSink = async (): Promise<void> => {};
  const close = async (): Promise<void> => {
    await closeSink();
    await starlark?.close();
    await engines.close();
  };
  try {
    const vaultKey = await loadVaultKey({ dataDir, env: options.env, envName: boot.vault.key_env });
    const instruments = platformInstruments(metrics);
    const events = createEventPublisher({ bus, clock, warn: (context, message) => logger.warn(context, message), onEmit: (kind, data) => instruments.event(kind, data), interest: storedEventInterest(store, clock) });
    const licence = await openLicence({ config, store, clock, log: logger, events });
    instrumentLicence(licence.gate, metrics);
    // The keys are the deployment's to hand to every api node; the store records what the first
    // node held and a node that holds another refuses to start (docs/scale-out.md).
    const checkpointSigner = await loadCheckpointSigner(checkpointKeyPath(dataDir, boot.audit.checkpoints.signing_key_file));
    const backupSigner = await loadBackupSigner(backupKeyPath(dataDir, boot.backup.signing_key_file));
    const fleetClaims = [
      vaultKeyClaim(vaultKey, boot.vault.key_env),
      signingKeyClaim('audit_checkpoint_key', checkpointSigner.keyId),
      signingKeyClaim('backup_signing_key', backupSigner.keyId),
      await licenceClaim(boot, licence.state()),
    ];
    const fleetCheck = { store, env: options.env, processName: options.processName ?? 'api', now: () => clock.now(), log: logger };
    await agreeWithFleetAtBoot(fleetClaims, fleetCheck);
    const agents = createAgentStore(store);
    // Crash points of the fault-injection tests (docs/tools.md "Fault points"). In the all-in-one
    // the session store below is the worker's too: its points stop this process.
    const faults = faultPointsFromEnv(options.env);
    const sessions = createSessionStore(store, clock, faults);
    const memory = createMemoryStore(store, agents, clock);
    const version = platformVersion();
    warnIfMessagesOutgrowTheBus(boot, bus, logger);
    config.onChange(({ config: next }) => warnIfMessagesOutgrowTheBus(next, bus, logger));

    const warn = (context: Record<string, unknown>, message: string): void => logger.warn(context, message);
    const starlarkLimits = (): StarlarkLimits => starlarkLimitsOf(config.current().skills);
    const models = createProviders(() => config.current(), {
      env: options.env,
      onRetry: (event) => logger.warn(event, 'model provider call failed; retrying'),
      observe: (sample) => instruments.modelCall(sample),
    });
    const schedules = createScheduleService({ store, queue, agents, clock, settings: () => config.current().schedules });
    const vault = instrumentVault(createVault({ store, clock, key: vaultKey }), metrics);
    const source = directoryPackageSource(version);
    const integrationState = integrationStateCollections(store);
    const equipEffects = [
      ...competencyEquipEffects({ store, schedules }),
      contractBindingEffect({ store, now: () => clock.now(), liveTools: (id) => fleetLiveTools(integrationState, id) }),
    ];
    const catalogRegistry = { access: registryAccessOf(() => config.current().catalog, options.env), platformVersion: version };
    const catalog = createCatalogService({
      store,
      agents,
      sessions,
      memory,
      clock,
      source,
      skills: { starlark, limits: starlarkLimits },
      effects: createEquipEffects({ agents, warn }, equipEffects),
      events,
      registry: catalogRegistry,
    });
    const lifecycle = createAgentLifecycle({ store, agents, bus, clock, events });
    // [audit.checkpoints] is read at boot: a new sink or key takes a restart (docs/audit.md).
    const checkpointSink = openCheckpointSink(boot.audit.checkpoints, () => clock.now());
    closeSink = async () => void (await checkpointSink?.close());
    const auditCheckpoints = createAuditCheckpoints({
      store,
      clock,
      sink: checkpointSink,
      signer: checkpointSigner,
      intervalSecs: () => config.current().audit.checkpoints.interval_secs,
    });
    const audit = createAuditTrail({
      store,
      clock,
      enabled: boot.audit.enabled,
      onAppend: () => metrics.auditEntriesTotal.inc(),
      events,
      ...(auditCheckpoints.configured ? { checkpoints: auditCheckpoints } : {}),
      archive: auditCheckpoints.archive,
    });
    const retention = createRetentionService({
      store,
      clock,
      settings: () => config.current().retention,
      auditEnabled: boot.audit.enabled,
      archive: auditCheckpoints.archive,
      writeCheckpoint: () => auditCheckpoints.write(),
      audit,
      licence: () => licence.state(),
      node: `${options.processName ?? 'api'}@${hostname()}:${process.pid}`,
      log: logger,
    });
    const keys = instrumentKeys(createKeyService({ store, clock }), metrics);
    // Compliance packs, reports and attestations (docs/compliance.md); attestations are signed with the checkpoint key.
    const { compliance, attestations } = await openCompliance({ config, store, clock, logger, audit, keys, vault, licence: () => licence.state(), signer: checkpointSigner, version });
    const webhookSecrets = createWebhookSecrets(vaultKey);
    const workflows = createWorkflowService({
      store,
      clock,
      agents,
      licence: licence.gate,
      models,
      runBus: createRunBus(bus, clock, warn),
      settings: () => config.current().workflows,
      warn,
      events,
      // A channel-started run cancelled here still answers its conversation (docs/channels.md).
      onRunEnded: channelRunReplies(bus, clock),
      faults,
    });
    const channels = createChannelService({
      store,
      bus,
      clock,
      kinds: createChannelKinds(options.channelKinds),
      vaultKey,
      agentExists: async (id) => (await agents.get(id)) !== null,
      workflowExists: (id) => workflowExists(workflows, id),
    });
    const backups = createBackupService({
      dataDir,
      backupsDir: boot.backup.dir,
      store,
      snapshots: storeSnapshotsOf(store),
      vaultKey,
      clock,
      version,
      audit,
      afterRestore: afterRestore({
        audit,
        auditCheckpoints,
        schedules,
        bus,
        channels,
        logger,
        reagreeWithFleet: async () => {
          await forgetFleetAgreement(store);
          await agreeWithFleetAtBoot(fleetClaims, fleetCheck);
        },
      }),
      // [backup] signing_key_file is read at boot; trusted_keys and import_dirs at each restore.
      signer: backupSigner,
      trusted: () => trustedBackupKeys(config.current().backup.trusted_keys),
      importDirs: () => config.current().backup.import_dirs,
      checkPackages: (snapshot, { foreign }) =>
        checkArchivedPackages(snapshot, { live: store, registry: catalogRegistry, skills: { starlark, limits: starlarkLimits } }, foreign),
    });
    const deps: ApiDeps = {
      config,
      version,
      clock,
      logger,
      logBuffer: buffer,
      metrics,
      store,
      bus,
      queue,
      keys,
      audit,
      auditCheckpoints,
      retention,
      vault,
      authBackoff: createAuthBackoff({ store, clock, settings: () => config.current().auth.rate_limit }),
      models,
      licence,
      agents,
      sessions,
      agentStats: createAgentStats(store),
      lifecycle,
      catalog,
      revocations: createRevocationService({ store, agents, lifecycle, clock, audit, events }),
      skills: createSkillService({ store, catalog, starlarkAvailable: starlark !== null }),
      starlark,
      starlarkLimits,
      memory,
      workflows,
      schedules,
      integrations: createIntegrationService({
        store,
        bus,
        clock,
        catalog,
        source,
        vault,
        settings: () => config.current().integrations,
        warn,
      }),
      webhooks: createWebhookService({
        store,
        agents,
        clock,
        secrets: webhookSecrets,
        // POST /webhooks/{id}/test sends from the api node, under the same limits as deliveries.
        transport: guardedPoster(() => {
          const { network, webhooks } = config.current();
          return { allowPrivate: network.allow_private_targets, timeoutMs: webhooks.timeout_ms, maxResponseBytes: webhooks.max_response_bytes };
        }),
        settings: () => ({ ...config.current().webhooks, allow_private_targets: config.current().network.allow_private_targets }),
      }),
      webhookSecrets,
      events,
      triggers: createTriggerService({ store, clock, agents }),
      channels,
      transcripts: createTranscriptStore(store, clock),
      gateway: createGatewayViews({
        settings: () => config.current(),
        models,
        traffic: createGatewayTraffic(store, () => clock.now()),
        audit: createPrivacyAudit({ audit, counters: store.counters }),
      }),
      compliance,
      attestations,
      backups,
      requestShutdown: options.requestShutdown ?? (() => logger.warn('shutdown requested but no handler is bound')),
    };
    return { deps, close };
  } catch (error) {
    await close();
    throw error;
  }
}

