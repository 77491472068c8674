import type { ConfigHolder } from '@agent-platform/config';
import {
  createInvocationService,
  type AgentStats,
  type AgentStore,
  type Clock,
  type InvocationService,
  type LicenceGate,
  type ModelRegistry,
  type SessionStore,
} from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';

/** The shared pieces an invocation runs over; the all-in-one root passes the api's. */
export interface InvocationSources {
  config: ConfigHolder;
  clock: Clock;
  logger: Logger;
  store: Store;
  agents: AgentStore;
  sessions: SessionStore;
  agentStats: AgentStats;
  models: ModelRegistry;
  licence: { gate: LicenceGate };
}

/**
 * The worker's invocation service over the running config: `[agents]` limits and provider prices
 * are read per invocation, so POST /config/reload applies to the next one.
 */
export function composeInvocationService(sources: InvocationSources): InvocationService {
  const log = sources.logger.child({ service: 'agent-worker' });
  return createInvocationService({
    store: sources.store,
    clock: sources.clock,
    agents: sources.agents,
    sessions: sources.sessions,
    stats: sources.agentStats,
    models: sources.models,
    licence: sources.licence.gate,
    settings: () => sources.config.current().agents,
    prices: (providerId) => sources.config.current().providers.find((p) => p.id === providerId),
    warn: (context, message) => log.warn(context, message),
  });
}
