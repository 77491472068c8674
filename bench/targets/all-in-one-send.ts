import { startPlatformFixture } from '../platform-fixture.ts';
import { sendRequest } from '../platform-setup.ts';
import type { BenchTarget } from '../target.ts';

/**
 * The whole invocation path of the all-in-one platform: auth, validation, agent lookup, rate
 * limit, bus request to the in-process worker, licence reservation, the `local` echo model,
 * session append, stats, usage, audit and the request log line.
 */
export const allInOneSend: BenchTarget = {
  name: 'all-in-one-send',
  description: 'all-in-one POST /agents/{id}/send, local provider (the agent path)',
  // Issue 23's goals (docs/performance.md "Send path budget (issue 23)"), with [storage] durability "full".
  goals: [
    { kind: 'throughput-ratio', against: 'hello-world', atLeast: 0.1, label: 'all-in-one send >= 0.1x hello world' },
    { kind: 'at-most', metric: 'latencyP50Ms', atMost: 3, label: 'all-in-one send p50 <= 3 ms at 10 connections' },
    { kind: 'at-most', metric: 'rssMb', atMost: 250, label: 'all-in-one RSS under the send load <= 250 MB' },
  ],
  async start({ nodeFlags }) {
    const platform = await startPlatformFixture({ nodeFlags, installAgent: true });
    return {
      urls: [platform.url],
      processes: [{ role: 'platform', pid: platform.pid }],
      request: sendRequest(platform.agentId!, platform.token),
      stop: platform.stop,
    };
  },
};
