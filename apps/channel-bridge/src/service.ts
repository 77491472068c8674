import type { ChannelBridge } from '@agent-platform/channels';
import type { Logger } from '@agent-platform/observability';

export interface ChannelBridgeDeps {
  logger: Logger;
  /** The bridge runtime of libs/channels (leases, adapters, replies). */
  bridge: ChannelBridge;
}

/**
 * The channel-bridge service (docs/channels.md "Fleet"): runs the enabled channels whose lease
 * this process holds, takes over those of a dead bridge, and sends replies through them.
 */
export function createChannelBridgeService(deps: ChannelBridgeDeps): { name: string; start(): Promise<void>; stop(): Promise<void> } {
  const log = deps.logger.child({ service: 'channel-bridge' });
  return {
    name: 'channel-bridge',
    start: async () => {
      await deps.bridge.start();
      log.debug('channel-bridge started');
    },
    stop: async () => {
      await deps.bridge.stop();
      log.debug('channel-bridge stopped');
    },
  };
}
