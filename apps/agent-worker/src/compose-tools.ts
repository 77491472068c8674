import type { ConfigHolder } from '@agent-platform/config';
import {
  createAgentTools,
  createAuditTrail,
  findSkill,
  starlarkToolBindings,
  type AgentToolsProvider,
  type AuditTrail,
  type Clock,
  type FaultPoints,
  type IntegrationTools,
  type StarlarkLimits,
  type StarlarkRunner,
} from '@agent-platform/domain';
import { platformInstruments, type Logger, type PlatformMetrics } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';
import { observeTools } from './observed-tools.ts';

export interface ToolSources {
  config: ConfigHolder;
  clock: Clock;
  logger: Logger;
  store: Store;
  /** The integration host of this process: tools run where agents run (docs/integrations.md). */
  integrations: IntegrationTools;
  /** The process's audit trail; absent: one over the shared store (a worker alone). */
  audit?: Pick<AuditTrail, 'record'>;
  /** The Starlark interpreter of this process (null: not built) and `[skills]` limits (docs/skills.md). */
  starlark: StarlarkRunner | null;
  starlarkLimits: () => StarlarkLimits;
  /** This process's metrics (`tool_calls_total`); absent: not counted. */
  metrics?: PlatformMetrics;
  /** This process, named as the worker of the tool calls it journals. */
  processId: string;
  /** Crash points of the fault-injection tests (docs/tools.md "Fault points"). */
  faults?: FaultPoints;
}

/** The tools an invocation's model may call (docs/tools.md): skills, integrations, contracts. */
export function composeAgentTools(sources: ToolSources): AgentToolsProvider {
  const log = sources.logger.child({ service: 'tools' });
  const { store, clock } = sources;
  const audit = sources.audit ?? createAuditTrail({ store, clock, enabled: sources.config.current().audit.enabled });
  const tools = createAgentTools({
    store,
    integrations: sources.integrations,
    // Installed or bundled (docs/skills.md); starlark skills give tools, run on this process's interpreter.
    findSkill: async (id) => (await findSkill(store, id))?.skill ?? null,
    skillTools: (skill) => starlarkToolBindings(skill, sources.starlark, sources.starlarkLimits()),
    audit,
    now: () => clock.now(),
    warn: (context, message) => log.warn(context, message),
    worker: sources.processId,
    ...(sources.faults === undefined ? {} : { faults: sources.faults }),
    // The operator's word first (`[integrations.idempotent_keys]`), else the package's own claim.
    idempotentKeys: (integration) => sources.config.current().integrations.idempotent_keys[integration.id] ?? integration.idempotent_keys === true,
  });
  return observeTools(tools, sources.metrics === undefined ? undefined : platformInstruments(sources.metrics));
}
