import type { EventPublisher } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';

export interface ChannelBridgeDeps {
  logger: Logger;
  /** Where `channel.message.received` goes (docs/events.md). */
  events?: EventPublisher;
}

/**
 * The channel-bridge service. It owns no work yet (see this app's README for the issue that brings it);
 * it is already composed by the all-in-one root so that its start/stop order is fixed now.
 */
export function createChannelBridgeService(deps: ChannelBridgeDeps): { name: string; start(): Promise<void>; stop(): Promise<void> } {
  const log = deps.logger.child({ service: 'channel-bridge' });
  return {
    name: 'channel-bridge',
    start: async () => {
      log.debug('channel-bridge started');
    },
    stop: async () => {
      log.debug('channel-bridge stopped');
    },
  };
}
