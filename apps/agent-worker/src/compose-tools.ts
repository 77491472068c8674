import type { ConfigHolder } from '@agent-platform/config';
import {
  catalogCollections,
  createAgentTools,
  createAuditTrail,
  type AgentToolsProvider,
  type AuditTrail,
  type Clock,
  type IntegrationTools,
} from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';

export interface ToolSources {
  config: ConfigHolder;
  clock: Clock;
  logger: Logger;
  store: Store;
  /** The integration host of this process: tools run where agents run (docs/integrations.md). */
  integrations: IntegrationTools;
  /** The process's audit trail; absent: one over the shared store (a worker alone). */
  audit?: Pick<AuditTrail, 'record'>;
}

/** The tools an invocation's model may call (docs/tools.md): skills, integrations, contracts. */
export function composeAgentTools(sources: ToolSources): AgentToolsProvider {
  const log = sources.logger.child({ service: 'tools' });
  const { store, clock } = sources;
  const audit = sources.audit ?? createAuditTrail({ store, clock, enabled: sources.config.current().audit.enabled });
  const skills = catalogCollections(store).skills;
  return createAgentTools({
    store,
    integrations: sources.integrations,
    findSkill: async (id) => (await skills.get(id))?.doc ?? null,
    audit,
    now: () => clock.now(),
    warn: (context, message) => log.warn(context, message),
  });
}
