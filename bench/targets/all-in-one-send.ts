import { startPlatformFixture } from '../platform-fixture.ts';
import type { BenchTarget } from '../target.ts';

/**
 * The whole invocation path of the all-in-one platform: auth, validation, agent lookup, rate
 * limit, bus request to the in-process worker, licence reservation, the `local` echo model,
 * session append, stats, usage, audit and the request log line.
 */
export const allInOneSend: BenchTarget = {
  name: 'all-in-one-send',
  description: 'all-in-one POST /agents/{id}/send, local provider (the agent path)',
  goal: {
    kind: 'throughput-ratio',
    against: 'hello-world',
    atLeast: 0.5,
    label: 'all-in-one send >= 0.5x hello world',
  },
  async start({ nodeFlags }) {
    const platform = await startPlatformFixture({ nodeFlags, installAgent: true });
    return {
      urls: [platform.url],
      pids: [platform.pid],
      request: {
        method: 'POST',
        path: `/agents/${platform.agentId}/send`,
        headers: { authorization: `Bearer ${platform.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Water damage in the kitchen, policy HO-1234' }),
      },
      stop: platform.stop,
    };
  },
};
