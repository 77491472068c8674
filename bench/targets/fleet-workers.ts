import { startFleetTarget } from '../fleet-fixture.ts';
import { runLoad } from '../load.ts';
import type { BenchTarget, StartOptions, StartedTarget } from '../target.ts';

/**
 * The pair behind "2 workers at least 1.8x one": the worker is the bottleneck. Each worker runs
 * at most WORKER_CONCURRENCY invocations at once (`[agents] worker_concurrency`) and the model is
 * a stand-in that WAITS MODEL_DELAY_MS per answer (it burns no CPU), so one worker can finish
 * about WORKER_CONCURRENCY / MODEL_DELAY_MS invocations a second however fast the machine is.
 * CALLERS connections (fixed, whatever `--connections` says) keep every worker's slots full
 * even though NATS hands invocations to the workers at random.
 *
 * The rate is chosen so that the slots, not the CPU, stay the limit on a 2-core machine: 40
 * invocations a second per worker (4 slots, 100 ms). The earlier 20 ms wait asked for 200 and 400
 * a second, more than the api node, the workers, NATS and the load generator together could
 * serve on two cores (about 6 ms of CPU per invocation across the processes of a fleet), so the
 * pair measured the machine's CPU rather than what a second worker adds (docs/performance.md).
 */
export const WORKER_CONCURRENCY = 4;
export const MODEL_DELAY_MS = 100;
export const CALLERS = 32;

function startWaitingFleet(workers: number, { nodeFlags }: StartOptions): Promise<StartedTarget> {
  return startFleetTarget(
    { nodeFlags, apis: 1, workers, model: { kind: 'stand-in', delayMs: MODEL_DELAY_MS }, workerConcurrency: WORKER_CONCURRENCY },
    (fleet, request, settings) => runLoad(fleet.urls, request, { ...settings, connections: CALLERS, pipelining: 1 }),
  );
}

const described = (workers: number) =>
  `1 api + ${workers} agent worker${workers > 1 ? 's' : ''} (worker_concurrency ${WORKER_CONCURRENCY}), ` +
  `model stand-in waiting ${MODEL_DELAY_MS} ms, send at ${CALLERS} connections`;

export const fleetOneWorker: BenchTarget = {
  name: 'fleet-1-worker',
  description: described(1),
  start: (options) => startWaitingFleet(1, options),
};

export const fleetTwoWorkers: BenchTarget = {
  name: 'fleet-2-workers',
  description: described(2),
  goal: { kind: 'throughput-ratio', against: 'fleet-1-worker', atLeast: 1.8, label: '2 workers >= 1.8x one (the worker the bottleneck)' },
  start: (options) => startWaitingFleet(2, options),
};
