import type { ConfigHolder } from '@agent-platform/config';
import type {
  AgentLifecycle,
  AgentStats,
  AgentStore,
  AuditCheckpoints,
  AuditTrail,
  AuthBackoff,
  CatalogService,
  Clock,
  IntegrationService,
  KeyService,
  LicenceGate,
  LicenceState,
  MemoryStore,
  ModelRegistry,
  RetentionService,
  RevocationService,
  ScheduleService,
  EventPublisher,
  GatewayViews,
  TriggerService,
  SessionStore,
  SkillService,
  TranscriptStore,
  StarlarkLimits,
  StarlarkRunner,
  Vault,
  WebhookSecrets,
  WebhookService,
  WorkflowService,
} from '@agent-platform/domain';
import type { ChannelService } from '@agent-platform/channels';
import type { AttestationService, ComplianceService } from '@agent-platform/compliance';
import type { BackupService } from '@agent-platform/backup';
import type { Store } from '@agent-platform/store';
import type { Bus } from '@agent-platform/bus';
import type { Queue } from '@agent-platform/queue';
import type { Logger, LogBuffer, PlatformMetrics } from '@agent-platform/observability';

/**
 * The running config, swapped atomically by POST /config/reload. The interface is libs/config's
 * (current, redactedText, reload, onChange), re-exported so api code keeps importing it from here.
 */
export type { ConfigHolder } from '@agent-platform/config';

/** Everything the api needs, built by a composition root (apps/api/src/compose.ts or apps/platform). */
export interface ApiDeps {
  config: ConfigHolder;
  version: string;
  clock: Clock;
  logger: Logger;
  logBuffer: LogBuffer;
  metrics: PlatformMetrics;
  store: Store;
  bus: Bus;
  queue: Queue;
  keys: KeyService;
  audit: AuditTrail;
  /** Signed checkpoints of the audit chain in `[audit.checkpoints]`'s sink (docs/audit.md). */
  auditCheckpoints: AuditCheckpoints;
  /** Retention sweeps and legal holds (docs/retention.md). */
  retention: RetentionService;
  vault: Vault;
  authBackoff: AuthBackoff;
  /** Model providers of the running config (follows reloads); `resolve()` gives the default model. */
  models: ModelRegistry;
  /**
   * The carrier licence (DECISIONS D3), loaded at boot and on POST /config/reload, and the gate
   * every model invocation passes before it reaches a provider.
   */
  licence: { state(): LicenceState; gate: LicenceGate };
  /** Installed agents (created and removed only by the catalog). */
  agents: AgentStore;
  /** Canonical agent sessions, shared by every api node and worker. */
  sessions: SessionStore;
  /** Per-agent invocation counters behind GET /agents/{id}. */
  agentStats: AgentStats;
  /** Suspend and activate (spec §States "Agent"). */
  lifecycle: AgentLifecycle;
  /** Package install and uninstall (docs/catalog.md). */
  catalog: CatalogService;
  /** Registry revocations: applying feed entries, the operator override (docs/catalog.md "Revocations"). */
  revocations: RevocationService;
  /** Installed and bundled skills (docs/skills.md). */
  skills: SkillService;
  /**
   * The Starlark interpreter of this process (@agent-platform/starlark), or null when this
   * machine has not built it; with `starlarkLimits`, what skill tool calls run on.
   */
  starlark: StarlarkRunner | null;
  /** `[skills]` limits of one Starlark run, read per run (follows reloads). */
  starlarkLimits: () => StarlarkLimits;
  /** Per-agent key-value memory. */
  memory: MemoryStore;
  /** Workflow definitions and runs (docs/workflows.md); agent workers execute the steps. */
  workflows: WorkflowService;
  /** Schedules and cron jobs (one store) and their queue schedulers; the scheduler fires them (docs/schedules.md). */
  schedules: ScheduleService;
  /** The integration routes: desired states in the store, fleet status from the hosts' rows (docs/integrations.md). */
  integrations: IntegrationService;
  /** Outbound webhooks and their delivery log; agent workers deliver (docs/webhooks.md). */
  webhooks: WebhookService;
  /** Opens webhook signing secrets (sealed with the vault key): the all-in-one's deliveries use it. */
  webhookSecrets: WebhookSecrets;
  /** Publishes platform events on the bus (docs/events.md); never fails the operation that emits. */
  events: EventPublisher;
  /** Triggers and their fire records (docs/events.md "Triggers"); agent workers do the matching. */
  triggers: TriggerService;
  /** Channel records, status and inbound HTTP (docs/channels.md); the bridges run the adapters. */
  channels: ChannelService;
  /** Per-(channel, conversation) transcripts of the agents (docs/channels.md "Transcripts"). */
  transcripts: TranscriptStore;
  /** The privacy gateway's pools, recent decisions and compliance figures, from the store (docs/privacy-gateway.md). */
  gateway: GatewayViews;
  /** Compliance packs and reports (spec §Compliance; docs/compliance.md). */
  compliance: ComplianceService;
  /** Signed attestations of manual compliance controls (docs/compliance.md "Attestations"). */
  attestations: AttestationService;
  /** Backups and restores of the embedded store under `<data_dir>/backups` (docs/backup.md). */
  backups: BackupService;
  /** Called by POST /shutdown after the response is sent; the root stops every service. */
  requestShutdown: () => void;
}
