import type { Logger } from '@agent-platform/observability';

export interface AgentWorkerDeps {
  logger: Logger;
}

/**
 * The agent-worker service. It owns no work yet (see this app's README for the issue that brings it);
 * it is already composed by the all-in-one root so that its start/stop order is fixed now.
 */
export function createAgentWorkerService(deps: AgentWorkerDeps): { name: string; start(): Promise<void>; stop(): Promise<void> } {
  const log = deps.logger.child({ service: 'agent-worker' });
  return {
    name: 'agent-worker',
    start: async () => {
      log.debug('agent-worker started');
    },
    stop: async () => {
      log.debug('agent-worker stopped');
    },
  };
}
