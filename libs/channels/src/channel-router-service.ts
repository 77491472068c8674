import type { Subscription } from '@agent-platform/bus';
import { consumeChannelInbound, type ChannelRouterDeps } from './channel-router.ts';

/**
 * The channel router as a service of an agent worker (and of the all-in-one): consumes
 * `channel.inbound` while running, drains on stop.
 */
export function createChannelRouterService(deps: ChannelRouterDeps): { name: string; start(): Promise<void>; stop(): Promise<void> } {
  let subscription: Subscription | null = null;
  return {
    name: 'channel-router',
    async start() {
      subscription = await consumeChannelInbound(deps);
    },
    async stop() {
      await subscription?.drain();
      subscription = null;
    },
  };
}
