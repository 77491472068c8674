import type { Logger } from '@agent-platform/observability';

export interface SchedulerDeps {
  logger: Logger;
}

/**
 * The scheduler service. It owns no work yet (see this app's README for the issue that brings it);
 * it is already composed by the all-in-one root so that its start/stop order is fixed now.
 */
export function createSchedulerService(deps: SchedulerDeps): { name: string; start(): Promise<void>; stop(): Promise<void> } {
  const log = deps.logger.child({ service: 'scheduler' });
  return {
    name: 'scheduler',
    start: async () => {
      log.debug('scheduler started');
    },
    stop: async () => {
      log.debug('scheduler stopped');
    },
  };
}
