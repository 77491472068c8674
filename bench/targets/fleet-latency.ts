import { startFleetTarget } from '../fleet-fixture.ts';
import { runLoad } from '../load.ts';
import { measureDirectNats } from '../nats-direct.ts';
import type { BenchTarget } from '../target.ts';

/**
 * The pair behind "added p50 of the HTTP path over a direct NATS request to the same worker":
 * each starts one api and one agent worker (local model) and measures at ONE connection, whatever
 * `--connections` says, so that neither p50 includes time spent queued behind other requests.
 */
const ONE_CALLER = { connections: 1, pipelining: 1 };
const ONE_API_ONE_WORKER = { apis: 1, workers: 1, model: { kind: 'local' } } as const;

export const fleetLatencyHttp: BenchTarget = {
  name: 'fleet-latency-http',
  description: '1 api + 1 agent worker, POST /agents/{id}/send at 1 connection',
  goal: { kind: 'added-p50-ms', against: 'fleet-latency-nats', atMost: 1, label: 'added p50 of HTTP over a direct NATS request <= 1 ms' },
  start: ({ nodeFlags }) =>
    startFleetTarget({ nodeFlags, ...ONE_API_ONE_WORKER }, (fleet, request, settings) =>
      runLoad(fleet.urls, request, { ...settings, ...ONE_CALLER }),
    ),
};

export const fleetLatencyNats: BenchTarget = {
  name: 'fleet-latency-nats',
  description: '1 api + 1 agent worker, agents.invoke sent straight to NATS (no HTTP, no api) at 1 caller',
  start: ({ nodeFlags }) =>
    startFleetTarget({ nodeFlags, ...ONE_API_ONE_WORKER }, (fleet, _request, settings) =>
      measureDirectNats(fleet.natsUrl, fleet.agentId, { ...settings, ...ONE_CALLER }),
    ),
};
