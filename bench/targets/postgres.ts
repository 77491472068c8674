import { startPostgresServer } from '@agent-platform/testkit';
import { startFleetFixture, startFleetTarget } from '../fleet-fixture.ts';
import { runLoad } from '../load.ts';
import { measureDirectNats } from '../nats-direct.ts';
import { startPlatformFixture } from '../platform-fixture.ts';
import { sendRequest } from '../platform-setup.ts';
import type { BenchTarget } from '../target.ts';
import { longSessionLoad, type SendingPlatform, type SendLoad } from './all-in-one-send-long-session.ts';
import { installBenchWorkflow, measureRuns, runRequest, sequentialWorkflow } from '../workflow-runs.ts';
import { ONE_CALLER_WARMUP_SECS } from './fleet-latency.ts';
import { scheduleTarget } from './fleet-schedules.ts';
import { CALLERS, MODEL_DELAY_MS, WORKER_CONCURRENCY } from './fleet-workers.ts';
import { STEPS } from './workflow-steps-all-in-one.ts';

/**
 * The targets of the embedded store, again on PostgreSQL (issue 22, docs/scale-out.md): the same
 * processes and load, with `[runtime] store = "postgres"` against a PostgreSQL 15 the run starts
 * on loopback (fsync and full-page writes off, as in the tests: the numbers leave out the cost
 * of a durable commit on the database's disk, which the embedded targets' `durability = "full"`
 * pays). No goals of their own: measured beside the embedded ones, and explained.
 */
const PG = { store: 'postgres' } as const;
const ONE_CALLER = { connections: 1, pipelining: 1 };

/** An all-in-one target on PostgreSQL: the platform and the database it starts, `load` driving the sends. */
function allInOnePostgres(
  name: string,
  description: string,
  load: (platform: SendingPlatform) => SendLoad,
): BenchTarget {
  return {
    name,
    description,
    async start({ nodeFlags }) {
      const postgres = await startPostgresServer();
      try {
        const url = await postgres.createDatabase('agent_platform');
        const platform = await startPlatformFixture({ nodeFlags, installAgent: true, extraConfig: `\n[runtime]\nstore = "postgres"\npostgres_url = "${url}"\n` });
        return {
          urls: [platform.url],
          processes: [
            { role: 'platform', pid: platform.pid },
            { role: 'postgres', pid: postgres.pid()!, withChildren: true },
          ],
          ...load({ url: platform.url, agentId: platform.agentId!, token: platform.token }),
          async stop() {
            await platform.stop();
            await postgres.dispose();
          },
        };
      } catch (error) {
        await postgres.dispose();
        throw error;
      }
    },
  };
}

export const allInOneSendPostgres = allInOnePostgres(
  'all-in-one-send-postgres',
  'all-in-one POST /agents/{id}/send, local provider, PostgreSQL store',
  ({ agentId, token }) => ({ request: sendRequest(agentId, token) }),
);

export const allInOneSendLongSessionPostgres = allInOnePostgres(
  'all-in-one-send-long-session-postgres',
  'all-in-one POST /agents/{id}/send with 23 KB messages (the session at about 0.9 MB), PostgreSQL store',
  longSessionLoad,
);

export const fleetSendPostgres: BenchTarget = {
  name: 'fleet-send-postgres',
  description: 'fleet (2 api + 2 agent workers over NATS) POST /agents/{id}/send, local provider, PostgreSQL store',
  start: ({ nodeFlags }) => startFleetTarget({ nodeFlags, apis: 2, workers: 2, model: { kind: 'local' }, ...PG }),
};

export const fleetLatencyHttpPostgres: BenchTarget = {
  name: 'fleet-latency-http-postgres',
  description: '1 api + 1 agent worker, POST /agents/{id}/send at 1 connection, PostgreSQL store',
  defaultWarmupSecs: ONE_CALLER_WARMUP_SECS,
  goal: { kind: 'added-p50-ms', against: 'fleet-latency-nats-postgres', atMost: 1, label: 'PostgreSQL: added p50 of HTTP over a direct NATS request <= 1 ms' },
  start: ({ nodeFlags }) =>
    startFleetTarget({ nodeFlags, apis: 1, workers: 1, model: { kind: 'local' }, ...PG }, (fleet, request, settings) =>
      runLoad(fleet.urls, request, { ...settings, ...ONE_CALLER }),
    ),
};

export const fleetLatencyNatsPostgres: BenchTarget = {
  name: 'fleet-latency-nats-postgres',
  description: '1 api + 1 agent worker, agents.invoke straight to NATS at 1 caller, PostgreSQL store',
  defaultWarmupSecs: ONE_CALLER_WARMUP_SECS,
  start: ({ nodeFlags }) =>
    startFleetTarget({ nodeFlags, apis: 1, workers: 1, model: { kind: 'local' }, ...PG }, (fleet, _request, settings) =>
      measureDirectNats(fleet.natsUrl, fleet.agentId, { ...settings, ...ONE_CALLER }),
    ),
};

/** As fleet-1-worker / fleet-2-workers (the same slots, model wait and callers). */
const waiting = (workers: number): BenchTarget => ({
  name: `fleet-${workers}-worker${workers > 1 ? 's' : ''}-postgres`,
  description: `1 api + ${workers} agent worker(s) (worker_concurrency ${WORKER_CONCURRENCY}), model stand-in waiting ${MODEL_DELAY_MS} ms, send at ${CALLERS} connections, PostgreSQL store`,
  ...(workers === 2 ? { goal: { kind: 'throughput-ratio', against: 'fleet-1-worker-postgres', atLeast: 1.8, label: 'PostgreSQL: 2 workers >= 1.8x one' } as const } : {}),
  start: ({ nodeFlags }) =>
    startFleetTarget({ nodeFlags, apis: 1, workers, model: { kind: 'stand-in', delayMs: MODEL_DELAY_MS }, workerConcurrency: WORKER_CONCURRENCY, ...PG }, (fleet, request, settings) =>
      runLoad(fleet.urls, request, { ...settings, connections: CALLERS, pipelining: 1 }),
    ),
});
export const fleetOneWorkerPostgres = waiting(1);
export const fleetTwoWorkersPostgres = waiting(2);

export const workflowStepsFleetPostgres: BenchTarget = {
  name: 'workflow-steps-fleet-postgres',
  description: `fleet (1 api + 2 agent workers over NATS), ${STEPS}-step Sequential workflow, local echo model, one run at a time, PostgreSQL store; latency = run wall time / ${STEPS}`,
  async start({ nodeFlags }) {
    const fleet = await startFleetFixture({ nodeFlags, apis: 1, workers: 2, model: { kind: 'local' }, ...PG });
    try {
      const workflowId = await installBenchWorkflow(fleet.urls[0]!, fleet.token, 'bench-ten-steps', sequentialWorkflow(STEPS));
      return {
        urls: fleet.urls,
        processes: fleet.processes,
        request: runRequest(workflowId, fleet.token),
        measure: (settings) =>
          measureRuns({ urls: fleet.urls, token: fleet.token, workflowId, concurrency: 1, durationSecs: settings.durationSecs, value: (ms) => ms / STEPS }),
        stop: fleet.stop,
      };
    } catch (error) {
      await fleet.stop();
      throw error;
    }
  },
};

export const fleetSchedulesOnePostgres = scheduleTarget(1, false, 'postgres');
