import { startPlatformFixture } from '../platform-fixture.ts';
import type { BenchTarget } from '../target.ts';
import { installBenchWorkflow, measureRuns, runRequest, sequentialWorkflow } from '../workflow-runs.ts';

/** Steps of the workflow: the run's wall time divided by this is the per-step overhead. */
export const STEPS = 10;

/**
 * Issue 9 item 9: the per-step overhead of a durable workflow run on the all-in-one platform. A
 * 10-step Sequential workflow on the `local` echo model (it answers at once), runs started ONE
 * AFTER ANOTHER whatever `--connections` says (so no run waits behind another); each Completed
 * run contributes `(completed_at - started_at) / 10` to p50/p99, and runs/s is the throughput.
 * Each step is a bus message, a claim write, the invocation, and a checkpoint write.
 */
export const workflowStepsAllInOne: BenchTarget = {
  name: 'workflow-steps-all-in-one',
  description: `all-in-one, ${STEPS}-step Sequential workflow on the local echo model, one run at a time; latency = run wall time / ${STEPS} (per-step overhead)`,
  goal: { kind: 'at-most', metric: 'latencyP50Ms', atMost: 2, label: 'workflow per-step overhead p50 <= 2 ms, all-in-one' },
  async start({ nodeFlags }) {
    const platform = await startPlatformFixture({ nodeFlags, installAgent: false });
    try {
      const workflowId = await installBenchWorkflow(platform.url, platform.token, 'bench-ten-steps', sequentialWorkflow(STEPS));
      return {
        urls: [platform.url],
        processes: [{ role: 'platform', pid: platform.pid }],
        request: runRequest(workflowId, platform.token),
        measure: (settings) =>
          measureRuns({ urls: [platform.url], token: platform.token, workflowId, concurrency: 1, durationSecs: settings.durationSecs, value: (ms) => ms / STEPS }),
        stop: platform.stop,
      };
    } catch (error) {
      await platform.stop();
      throw error;
    }
  },
};
