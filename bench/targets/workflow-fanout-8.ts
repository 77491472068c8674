import { startPlatformFixture } from '../platform-fixture.ts';
import type { BenchTarget } from '../target.ts';
import { fanOutWorkflow, installBenchWorkflow, measureRuns, runRequest } from '../workflow-runs.ts';

/** How long the model takes to answer: one step, the unit of the goal. */
export const STEP_MS = 200;
const MEMBERS = 8;

/**
 * Issue 9 item 9: a FanOut group of 8 steps, then a Collect, on the all-in-one platform with the
 * `local` model answering after 200 ms (`[[providers]] id = "local"`, `delay_ms`). If the group
 * runs in parallel, a run takes about one step; the goal is at most 1.5 steps (300 ms). Runs
 * are started one after another; p50/p99 are the run's wall time (`completed_at - started_at`).
 * `[workflows] step_concurrency` stays at its default (32), above the 8 members.
 */
export const workflowFanOut8: BenchTarget = {
  name: 'workflow-fanout-8',
  description: `all-in-one, FanOut of ${MEMBERS} steps + Collect, local model waiting ${STEP_MS} ms per answer, one run at a time; latency = run wall time`,
  goal: { kind: 'at-most', metric: 'latencyP50Ms', atMost: 1.5 * STEP_MS, label: `FanOut-${MEMBERS} run p50 <= 1.5x one step (${1.5 * STEP_MS} ms)` },
  async start({ nodeFlags }) {
    const platform = await startPlatformFixture({
      nodeFlags,
      installAgent: false,
      extraConfig: `\n[[providers]]\nid = "local"\ndelay_ms = ${STEP_MS}\n`,
    });
    try {
      const workflowId = await installBenchWorkflow(platform.url, platform.token, 'bench-fanout', fanOutWorkflow(MEMBERS));
      return {
        urls: [platform.url],
        processes: [{ role: 'platform', pid: platform.pid }],
        request: runRequest(workflowId, platform.token),
        measure: (settings) =>
          measureRuns({ urls: [platform.url], token: platform.token, workflowId, concurrency: 1, durationSecs: settings.durationSecs, value: (ms) => ms }),
        stop: platform.stop,
      };
    } catch (error) {
      await platform.stop();
      throw error;
    }
  },
};
