import { startFleetFixture } from '../fleet-fixture.ts';
import type { BenchTarget } from '../target.ts';
import { installBenchWorkflow, measureRuns, runRequest, sequentialWorkflow } from '../workflow-runs.ts';
import { STEPS } from './workflow-steps-all-in-one.ts';

/**
 * The same per-step overhead through a fleet: 1 api node and 2 agent workers over NATS
 * (JetStream carries `workflow.steps`; redis-server for the queue), the embedded store shared
 * through one data_dir, the `local` echo model in the workers. Runs are started on the api node
 * one after another and watched there; their steps go to whichever worker takes the message.
 */
export const workflowStepsFleet: BenchTarget = {
  name: 'workflow-steps-fleet',
  description: `fleet (1 api + 2 agent workers over NATS), ${STEPS}-step Sequential workflow, local echo model, one run at a time; latency = run wall time / ${STEPS}`,
  goal: { kind: 'at-most', metric: 'latencyP50Ms', atMost: 5, label: 'workflow per-step overhead p50 <= 5 ms, fleet' },
  async start({ nodeFlags }) {
    const fleet = await startFleetFixture({ nodeFlags, apis: 1, workers: 2, model: { kind: 'local' } });
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
