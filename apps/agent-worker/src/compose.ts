import { randomUUID } from 'node:crypto';
import { agreeWithFleetAtBoot, createConfigHolder, licenceClaim, loadLicence, loadVaultKey, vaultKeyClaim, type ConfigHolder, type LoadedConfig } from '@agent-platform/config';
import {
  createRunBus,
  createRunSweeper,
  createStepExecutor,
  createAgentStats,
  createAgentStore,
  createAuditTrail,
  createGatewayTraffic,
  createInvocationService,
  createModelGateway,
  createPrivacyAudit,
  createLicenceGate,
  createSessionStore,
  createVault,
  createWebhookSecrets,
  createEventPublisher,
  storedEventInterest,
  createTriggerFireSweeper,
  createTriggerMatcher,
  createTriggerStore,
  starlarkLimitsOf,
  type EventPublisher,
  type AgentStats,
  type AgentToolsProvider,
  type AgentStore,
  type AuditTrail,
  type Clock,
  type FaultPoints,
  type InvocationService,
  type LicenceGate,
  type LicenceState,
  type ModelRegistry,
  type SessionStore,
  type StarlarkLimits,
  type StarlarkRunner,
} from '@agent-platform/domain';
import { Subjects, type IdempotencySettledMessage, type PlatformConfig } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { faultPointsFromEnv, openProcess, platformVersion, type ComposeContext, type ComposeOptions, type ComposedProcess } from '@agent-platform/engines';
import { annotateSpan, createMetrics, NO_INSTRUMENTS, platformInstruments, tracingEnabled, type Logger, type PlatformInstruments, type PlatformMetrics } from '@agent-platform/observability';
import { createProviders } from '@agent-platform/providers';
import { loadStarlarkRunner } from '@agent-platform/starlark';
import type { Store } from '@agent-platform/store';
import { channelRunReplies } from '@agent-platform/channels';
import { composeChannelRouter } from './compose-channels.ts';
import { composeIntegrationHost } from './compose-integrations.ts';
import { composeAgentTools } from './compose-tools.ts';
import { busTriggerInvoker } from './handlers/trigger-handler.ts';
import { observeInvocations } from './observed-invocation.ts';
import { createAgentWorkerService, type AgentWorkerDeps } from './service.ts';
import { createWebhookDeliveryService } from './webhook-delivery-service.ts';

/** The shared pieces an invocation runs over; the all-in-one root passes the api's. */
export interface InvocationSources {
  config: ConfigHolder;
  clock: Clock;
  logger: Logger;
  store: Store;
  bus: Bus;
  agents: AgentStore;
  sessions: SessionStore;
  agentStats: AgentStats;
  models: ModelRegistry;
  licence: { gate: LicenceGate };
  /**
   * The Starlark interpreter that runs starlark skill tools (`starlarkToolBindings`), or null on a
   * machine that has not built it (docs/skills.md); `starlarkLimits` are `[skills]`, read per call.
   */
  starlark: StarlarkRunner | null;
  starlarkLimits: () => StarlarkLimits;
  /** Where the invocation and workflow events go (docs/events.md). */
  events: EventPublisher;
  /** The process's audit trail (the all-in-one's, with its metrics); absent: one over the shared store (a worker alone). */
  audit?: AuditTrail;
  /** This process's metrics registry (docs/observability.md); absent: nothing is counted (tests). */
  metrics?: PlatformMetrics;
  /** This process (a UUID): the holder of the step leases it takes and the worker of the tool calls it journals. */
  processId: string;
  /** Crash points of the fault-injection tests (`AP_FAULT_STOP_AT`, docs/tools.md "Fault points"); absent: none. */
  faults?: FaultPoints;
}

/** The sources' audit trail, or one over their store (a caller that brings none: tests). */
export function auditTrailOf(sources: Pick<InvocationSources, 'audit' | 'store' | 'clock' | 'config'>): AuditTrail {
  return sources.audit ?? createAuditTrail({ store: sources.store, clock: sources.clock, enabled: sources.config.current().audit.enabled });
}

/** The metric catalogue over the sources' registry, or instruments that count nothing. */
export function instrumentsOf(sources: { metrics?: PlatformMetrics }): PlatformInstruments {
  return sources.metrics === undefined ? NO_INSTRUMENTS : platformInstruments(sources.metrics);
}

/**
 * The worker's invocation service over the running config: `[agents]` limits and provider prices
 * are read per invocation, so a reload applies to the next one.
 */
export function composeInvocationService(sources: InvocationSources, tools?: AgentToolsProvider): InvocationService {
  const log = sources.logger.child({ service: 'agent-worker' });
  const { store, clock } = sources;
  // The privacy gateway sits at the model call, here where the worker makes it (docs/privacy-gateway.md).
  const audit = auditTrailOf(sources);
  const gateway = createModelGateway({
    models: sources.models,
    settings: () => sources.config.current(),
    audit: createPrivacyAudit({ audit, counters: store.counters }),
    traffic: createGatewayTraffic(store, () => clock.now()),
    clock,
    warn: (context, message) => log.warn(context, message),
  });
  const service = createInvocationService({
    gateway,
    ...(tools === undefined ? {} : { tools }),
    ...(sources.faults === undefined ? {} : { faults: sources.faults }),
    store: sources.store,
    clock: sources.clock,
    agents: sources.agents,
    sessions: sources.sessions,
    stats: sources.agentStats,
    models: sources.models,
    licence: sources.licence.gate,
    events: sources.events,
    settings: () => sources.config.current().agents,
    prices: (providerId) => sources.config.current().providers.find((p) => p.id === providerId),
    warn: (context, message) => log.warn(context, message),
    announceSettled: (id) => {
      sources.bus.notify<IdempotencySettledMessage>(Subjects.idempotencySettled, { id }).catch((err: unknown) => {
        log.warn({ err }, 'could not announce a settled idempotency key (its waiters look again within a second)');
      });
    },
  });
  // Traced and counted where invocations run (docs/observability.md); as built when neither applies.
  return sources.metrics === undefined && !tracingEnabled() ? service : observeInvocations(service, instrumentsOf(sources));
}

/**
 * The workflow side of a worker over the same sources: the step executor (its invocations go
 * through `invocation`, the worker's own service) and the sweeper. `busForgetsOnRestart`: the
 * embedded bus of the all-in-one, whose step messages a crash loses (the first sweep re-publishes).
 */
export function composeWorkflowRunner(
  sources: InvocationSources,
  invocation: InvocationService,
  options: { busForgetsOnRestart: boolean },
): AgentWorkerDeps['workflows'] {
  const log = sources.logger.child({ service: 'workflows' });
  const warn = (context: Record<string, unknown>, message: string): void => log.warn(context, message);
  const settings = (): PlatformConfig['workflows'] => sources.config.current().workflows;
  const runBus = createRunBus(sources.bus, sources.clock, warn);
  // A run a channel message started sends its output back from whichever process ends it.
  const replies = channelRunReplies(sources.bus, sources.clock);
  const instruments = instrumentsOf(sources);
  const audit = auditTrailOf(sources);
  const common = { store: sources.store, clock: sources.clock, licence: sources.licence.gate, runBus, settings, warn, events: sources.events, agents: sources.agents, audit };
  const sweeper = createRunSweeper({ ...common, onRunEnded: replies, busForgetsOnRestart: options.busForgetsOnRestart });
  return {
    executor: createStepExecutor({
      ...common,
      onRunEnded: replies,
      invocation,
      holder: sources.processId,
      wake: (runId, at) => sweeper.wake(runId, at),
      onStepExecuted: (sample) => {
        instruments.workflowStep(sample);
        annotateSpan({ 'workflow.step.mode': sample.mode, 'workflow.step.outcome': sample.outcome });
      },
    }),
    sweeper,
    stepConcurrency: () => settings().step_concurrency,
  };
}

/**
 * The trigger matcher of a worker (docs/events.md "Triggers"): its invocations go to the agent
 * workers on `agents.invoke` like any other, waiting at most the invocation timeout plus a grace.
 */
export function composeTriggerMatching(sources: InvocationSources): NonNullable<AgentWorkerDeps['triggers']> {
  const log = sources.logger.child({ service: 'triggers' });
  const invocationMs = (): number => sources.config.current().agents.invocation_timeout_secs * 1000;
  const warn = (context: Record<string, unknown>, message: string): void => log.warn(context, message);
  const triggers = createTriggerStore(sources.store, sources.clock);
  // A fire's lease and the sweep for lost ones follow the workflow step leases (`[workflows]`).
  const workflows = (): PlatformConfig['workflows'] => sources.config.current().workflows;
  return {
    matcher: createTriggerMatcher({
      triggers,
      agents: sources.agents,
      invoke: busTriggerInvoker(sources.bus, () => invocationMs() + TRIGGER_GRACE_MS),
      warn,
      leaseMs: () => workflows().lease_secs * 1000,
      ...(sources.faults === undefined ? {} : { faults: sources.faults }),
    }),
    sweeper: createTriggerFireSweeper({ triggers, intervalMs: () => workflows().sweep_interval_ms, warn }),
    // NATS: the adapter keeps a running delivery alive (`working()`), so this is only how soon an
    // event held by a killed worker goes to another. The embedded bus (one process, nothing to
    // fail over to) has no keep-alive: there it must outlast the invocations a match waits for.
    ackWaitMs: sources.config.current().runtime.bus === 'embedded' ? invocationMs() + 2 * TRIGGER_GRACE_MS : FLEET_ACK_WAIT_MS,
  };
}

/** On a fleet bus, how long an event delivered to a worker that died waits before another worker gets it. */
const FLEET_ACK_WAIT_MS = 5_000;

/** Past the invocation timeout, how long a trigger waits for its answer (the worker's own timeout fires first). */
const TRIGGER_GRACE_MS = 30_000;

/**
 * The agent worker running alone (a fleet member): its own engines from `[runtime]`, the
 * licence and model providers from the same config file as the api nodes, and the invocation
 * service over the shared store, so idempotency keys, rate limits, budgets, sessions and usage
 * are the fleet's, not this process's. SIGHUP re-reads the config file and the licence.
 */
export async function composeAgentWorker(
  loaded: LoadedConfig,
  context: ComposeContext,
  options: ComposeOptions = {},
): Promise<ComposedProcess> {
  const config = createConfigHolder(loaded, { env: context.env, cwd: context.cwd });
  const boot = config.current();
  const { clock, logger, engines } = await openProcess(boot, context, options);
  const metrics = createMetrics();
  const instruments = platformInstruments(metrics);
  const starlark = loadStarlarkRunner();
  const close = async (): Promise<void> => {
    await starlark?.close();
    await engines.close();
  };
  try {
    const { store, bus } = engines;
    const faults = faultPointsFromEnv(context.env);
    let licence: LicenceState = await loadLicence(boot, logger);
    config.onChange(async ({ config: next }) => {
      licence = await loadLicence(next, logger);
    });
    const events = createEventPublisher({ bus, clock, warn: (context, message) => logger.warn(context, message), onEmit: (kind, data) => instruments.event(kind, data), interest: storedEventInterest(store, clock) });
    const sources: InvocationSources = {
      config,
      clock,
      logger,
      store,
      bus,
      // One trail for the gateway, the tools, the workflows and the requests' entries of this
      // process, counted in its own `audit_entries_total` (docs/observability.md).
      audit: createAuditTrail({ store, clock, enabled: boot.audit.enabled, onAppend: () => metrics.auditEntriesTotal.inc() }),
      agents: createAgentStore(store),
      sessions: createSessionStore(store, clock, faults),
      agentStats: createAgentStats(store),
      models: createProviders(() => config.current(), {
        env: context.env,
        onRetry: (event) => logger.warn(event, 'model provider call failed; retrying'),
        observe: (sample) => instruments.modelCall(sample),
      }),
      licence: { gate: createLicenceGate({ store, clock, state: () => licence, events }) },
      starlark,
      starlarkLimits: () => starlarkLimitsOf(config.current().skills),
      events,
      metrics,
      processId: randomUUID(),
      faults,
    };
    // Integration keys are resolved here, where the servers run: every node needs the same vault key (docs/vault.md).
    const vaultKey = await loadVaultKey({ dataDir: boot.storage.data_dir, env: context.env, envName: boot.vault.key_env });
    // The vault key and the licence are the fleet's: a worker holding others refuses to start (docs/scale-out.md).
    await agreeWithFleetAtBoot([vaultKeyClaim(vaultKey, boot.vault.key_env), await licenceClaim(boot, licence)], {
      store,
      env: context.env,
      processName: context.name,
      now: () => clock.now(),
      log: logger,
    });
    const integrations = composeIntegrationHost(
      { config, clock, logger, store, bus, vault: createVault({ store, clock, key: vaultKey }), env: context.env, version: platformVersion() },
      'agent-worker',
    );
    const invocation = composeInvocationService(sources, composeAgentTools({ ...sources, integrations }));
    // A worker alone is on a fleet bus (it refuses the embedded one), which keeps step messages.
    const workflows = composeWorkflowRunner(sources, invocation, { busForgetsOnRestart: false });
    return {
      logger,
      // The integration host starts first and stops last: tools are there before invocations arrive.
      services: [
        integrations,
        createAgentWorkerService({ bus, invocation, audit: auditTrailOf(sources), logger, settings: () => config.current().agents, workflows, triggers: composeTriggerMatching(sources) }),
        createWebhookDeliveryService({ store, bus, queue: engines.queue, clock, logger, secrets: createWebhookSecrets(vaultKey), config: () => config.current(), instruments }),
        composeChannelRouter(sources, invocation),
      ],
      close,
      reload: async () => void (await config.reload()),
      metrics,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
