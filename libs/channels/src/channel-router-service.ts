import type { Subscription } from '@agent-platform/bus';
import { consumeChannelInbound, type ChannelRouterDeps } from './channel-router.ts';
import { sweepRunReplies } from './channel-run-replies.ts';

const REPLY_SWEEP_MS = 30_000;
const REPLY_GRACE_MS = 30_000;

/**
 * The channel router as a service of an agent worker (and of the all-in-one): consumes
 * `channel.inbound` while running, and sweeps the replies of ended runs (channel-run-replies.ts);
 * drains on stop.
 */
export function createChannelRouterService(deps: ChannelRouterDeps): { name: string; start(): Promise<void>; stop(): Promise<void> } {
  let subscription: Subscription | null = null;
  let timer: NodeJS.Timeout | null = null;
  let sweeping: Promise<void> | null = null;
  const log = deps.logger.child({ service: 'channel-router' });
  /** One sweep at a time: a slow one makes the next tick skip. */
  const sweep = (): void => {
    sweeping ??= sweepRunReplies(deps, deps.replyGraceMs ?? REPLY_GRACE_MS)
      .then(() => undefined)
      .catch((err: unknown) => log.warn({ err }, 'the reply sweep failed; tried again on the next one'))
      .finally(() => {
        sweeping = null;
      });
  };
  return {
    name: 'channel-router',
    async start() {
      subscription = await consumeChannelInbound(deps);
      timer = setInterval(sweep, deps.replySweepMs ?? REPLY_SWEEP_MS);
      timer.unref();
    },
    async stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await sweeping;
      await subscription?.drain();
      subscription = null;
    },
  };
}
