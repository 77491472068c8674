import { workflowRuns } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import type { RecordedRequest } from '@agent-platform/testkit';
import { expect } from 'vitest';
import { call } from './platform-process.ts';

/**
 * The crash tests' workload (issue 9 "Tests that must exist"): runs of a 5-step Sequential
 * workflow whose step k sends `s<k> <previous output>` to a model that echoes it, so a message
 * names its step (first word) and its run (last word), and a run's output is known in advance.
 */
export const STEPS = 5;

export const FIVE_STEP_WORKFLOW = {
  agents_required: ['crash-agent'],
  steps: Array.from({ length: STEPS }, (_, i) => ({ name: `s${i + 1}`, agent: 'crash-agent', prompt: `s${i + 1} {{input}}` })),
};

/** What an uninterrupted run with this input produces. */
export function controlOutput(input: string): string {
  return [...Array.from({ length: STEPS }, (_, i) => `s${STEPS - i}`), input].join(' ');
}

/** The step (`s3`) and run input (`run-7`) a model call was made for. */
function stepOf(request: RecordedRequest): string | null {
  const text = String(request.body?.messages?.at(-1)?.content ?? '');
  const words = text.split(' ');
  return words.length >= 2 && /^s\d+$/.test(words[0]!) ? `${words.at(-1)}|${words[0]}` : null;
}

/** Model calls per `<run input>|<step>`. */
export function callsPerStep(requests: readonly RecordedRequest[]): Map<string, number> {
  const calls = new Map<string, number>();
  for (const request of requests) {
    const key = stepOf(request);
    if (key !== null) calls.set(key, (calls.get(key) ?? 0) + 1);
  }
  return calls;
}

/** `<run input>|<step>` of every step checkpointed in the store now. */
export async function checkpointedSteps(store: Store): Promise<Set<string>> {
  const done = new Set<string>();
  for (const { doc } of await workflowRuns(store).find()) for (const r of doc.step_results) done.add(`${doc.input}|${r.step_name}`);
  return done;
}

/** Starts `count` runs named `run-0`.., spread over the api nodes; returns their ids by input. */
export async function startRuns(urls: readonly string[], workflowId: string, count: number, token?: string): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const input = `run-${i}`;
      const res = await call(urls[i % urls.length]!, 'POST', `/workflows/${workflowId}/run`, { ...(token === undefined ? {} : { token }), body: { input } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.set(input, res.body.id);
    }),
  );
  return ids;
}

/** What the store held when a process was killed: the checkpointed steps, and the model calls made until then. */
export interface KillSnapshot {
  checkpointed: ReadonlySet<string>;
  callsAtKill: ReadonlyMap<string, number>;
}

/**
 * Every run ended Completed with the control run's output; no step checkpointed before a kill was
 * called again after it; a step interrupted by a kill ran at most once more per kill.
 */
export function expectCrashSafe(
  runs: ReadonlyArray<{ input: string; state: string; output: string | null }>,
  calls: ReadonlyMap<string, number>,
  kills: readonly KillSnapshot[],
): void {
  for (const run of runs) {
    expect(run, `run ${run.input}`).toMatchObject({ state: 'Completed', output: controlOutput(run.input) });
    for (let k = 1; k <= STEPS; k++) {
      const key = `${run.input}|s${k}`;
      const n = calls.get(key) ?? 0;
      expect(n, `${key} ran`).toBeGreaterThanOrEqual(1);
      expect(n, `${key} ran at most once more per kill`).toBeLessThanOrEqual(1 + kills.length);
      for (const [i, kill] of kills.entries()) {
        if (kill.checkpointed.has(key)) expect(n, `${key} was checkpointed before kill ${i + 1}, then called again`).toBe(kill.callsAtKill.get(key) ?? 0);
      }
    }
  }
}
