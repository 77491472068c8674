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
/**
 * At one caller a process sees a few hundred requests a second: after the default 3 s V8 was
 * still compiling them (a quarter of the api node's CPU on its compiler threads) and the CPU per
 * request was 25-36 % above what it is after 40 s (docs/performance.md "Warm-up of the one-caller
 * targets"). Both targets of the pair warm up alike.
 */
export const ONE_CALLER_WARMUP_SECS = 30;
const ONE_API_ONE_WORKER = { apis: 1, workers: 1, model: { kind: 'local' } } as const;

export const fleetLatencyHttp: BenchTarget = {
  name: 'fleet-latency-http',
  description: '1 api + 1 agent worker, POST /agents/{id}/send at 1 connection',
  defaultWarmupSecs: ONE_CALLER_WARMUP_SECS,
  goal: { kind: 'added-p50-ms', against: 'fleet-latency-nats', atMost: 1, label: 'added p50 of HTTP over a direct NATS request <= 1 ms' },
  start: ({ nodeFlags }) =>
    startFleetTarget({ nodeFlags, ...ONE_API_ONE_WORKER }, (fleet, request, settings) =>
      runLoad(fleet.urls, request, { ...settings, ...ONE_CALLER }),
    ),
};

export const fleetLatencyNats: BenchTarget = {
  name: 'fleet-latency-nats',
  description: '1 api + 1 agent worker, agents.invoke sent straight to NATS (no HTTP, no api) at 1 caller',
  defaultWarmupSecs: ONE_CALLER_WARMUP_SECS,
  start: ({ nodeFlags }) =>
    startFleetTarget({ nodeFlags, ...ONE_API_ONE_WORKER }, (fleet, _request, settings) =>
      measureDirectNats(fleet.natsUrl, fleet.agentId, { ...settings, ...ONE_CALLER }),
    ),
};
