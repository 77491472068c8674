import { startFleetFixture } from '../fleet-fixture.ts';
import { runLoad } from '../load.ts';
import { measureDirectNats } from '../nats-direct.ts';
import { sendRequest } from '../platform-setup.ts';
import type { BenchTarget } from '../target.ts';

/**
 * The pair behind "added p50 of the HTTP path over a direct NATS request to the same worker":
 * each starts one api and one agent worker (local model) and measures at ONE connection, whatever
 * `--connections` says, so that neither p50 includes time spent queued behind other requests.
 */
const ONE_CALLER = { connections: 1, pipelining: 1 };

export const fleetLatencyHttp: BenchTarget = {
  name: 'fleet-latency-http',
  description: '1 api + 1 agent worker, POST /agents/{id}/send at 1 connection',
  goal: { kind: 'added-p50-ms', against: 'fleet-latency-nats', atMost: 1, label: 'added p50 of HTTP over a direct NATS request <= 1 ms' },
  async start({ nodeFlags }) {
    const fleet = await startFleetFixture({ nodeFlags, apis: 1, workers: 1, model: { kind: 'local' } });
    const request = sendRequest(fleet.agentId, fleet.token);
    return {
      urls: fleet.urls,
      processes: fleet.processes,
      request,
      measure: (settings) => runLoad(fleet.urls, request, { ...settings, ...ONE_CALLER }),
      stop: fleet.stop,
    };
  },
};

export const fleetLatencyNats: BenchTarget = {
  name: 'fleet-latency-nats',
  description: '1 api + 1 agent worker, agents.invoke sent straight to NATS (no HTTP, no api) at 1 caller',
  async start({ nodeFlags }) {
    const fleet = await startFleetFixture({ nodeFlags, apis: 1, workers: 1, model: { kind: 'local' } });
    return {
      urls: fleet.urls,
      processes: fleet.processes,
      request: sendRequest(fleet.agentId, fleet.token),
      measure: (settings) => measureDirectNats(fleet.natsUrl, fleet.agentId, { ...settings, ...ONE_CALLER }),
      stop: fleet.stop,
    };
  },
};
