import { performance } from 'node:perf_hooks';
import type { WorkflowRunStatus } from '@agent-platform/contracts';
import { createPackageShelf } from '@agent-platform/testkit';
import { selfTimedResult, summarizeLatencies } from './latency.ts';
import type { BenchRequest, LoadResult } from './target.ts';

// What the workflow targets share (issue 9 item 9): a workflow installed from a package written
// for the run, and runs started one after another, each timed by the platform's own clock.

/** The agent every step calls: a plain prompt, no competency, so a step is the workflow machinery. */
export const BENCH_STEP_AGENT = 'bench-step-agent';

/** A run that has not ended after this long counts as a timeout (the 2 s SSE fallback read included). */
const RUN_TIMEOUT_MS = 30_000;

/**
 * The requests of these targets go on connections of their own (`connection: close`). With
 * fetch's keep-alive pool, the platform often did not stop on SIGTERM after a workflow load: its
 * graceful close waited for a pooled connection that Node's http server did not count as idle
 * until the bench dropped it, about 70 s later (docs/performance.md "Workflows (issue 9)"), and
 * the bench's stop gives up after 10 s with SIGKILL, which loses `--profile`'s profile. The
 * connection set-up is not in what is measured (the platform's own `completed_at - started_at`).
 */
const CLOSE = { connection: 'close' };

/** `count` Sequential steps, each passing `{{input}}` on (the echo model returns it unchanged). */
export function sequentialWorkflow(count: number): Record<string, unknown> {
  return {
    agents_required: [BENCH_STEP_AGENT],
    steps: Array.from({ length: count }, (_, i) => ({ name: `s${i + 1}`, agent: BENCH_STEP_AGENT })),
  };
}

/** A FanOut group of `count` steps given the same `{{input}}`, then a Collect joining their outputs. */
export function fanOutWorkflow(count: number): Record<string, unknown> {
  return {
    agents_required: [BENCH_STEP_AGENT],
    steps: [
      ...Array.from({ length: count }, (_, i) => ({ name: `f${i + 1}`, agent: BENCH_STEP_AGENT, mode: 'FanOut' })),
      { name: 'collect', agent: BENCH_STEP_AGENT, mode: 'Collect' },
    ],
  };
}

/**
 * Writes the agent and the workflow as packages (the test kit's shelf) and installs the workflow,
 * activated, through `POST /catalog/install` (which installs its agent from the sibling
 * directory first). Returns the workflow's id.
 */
export async function installBenchWorkflow(url: string, token: string, name: string, workflow: Record<string, unknown>): Promise<string> {
  const shelf = await createPackageShelf();
  try {
    await shelf.agent(BENCH_STEP_AGENT);
    const path = await shelf.workflow(name, workflow);
    const res = await fetch(`${url}/catalog/install`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...CLOSE },
      body: JSON.stringify({ path, activate: true }),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`POST /catalog/install of ${name} answered ${res.status}: ${text}`);
    const installed = (JSON.parse(text) as { installed: Array<{ name: string; id?: string }> }).installed;
    const id = installed.find((p) => p.name === name)?.id;
    if (id === undefined) throw new Error(`${name} was not installed as a workflow: ${text}`);
    return id;
  } finally {
    await shelf.close();
  }
}

/** `POST /workflows/{id}/run`: what the runner checks once before the load (it starts one run). */
export function runRequest(workflowId: string, token: string): BenchRequest {
  return {
    method: 'POST',
    path: `/workflows/${workflowId}/run`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...CLOSE },
    body: JSON.stringify({ input: 'bench check' }),
  };
}

export interface RunLoad {
  /** API nodes; runs are started on them round-robin, each watched on the node that started it. */
  urls: string[];
  token: string;
  workflowId: string;
  /** Runs in flight at once (each caller starts its next run once its last one ended). */
  concurrency: number;
  durationSecs: number;
  /**
   * The number a run contributes to latencyP50Ms/latencyP99Ms, from the ended run: its wall time
   * (`completed_at - started_at`, the platform's clock), or that divided by its steps.
   */
  value(wallMs: number): number;
}

export type RunOutcome = { kind: 'ended'; run: WorkflowRunStatus; clientMs: number } | { kind: 'non2xx' } | { kind: 'timeout' } | { kind: 'error' };

/**
 * Starts runs for `durationSecs`, `concurrency` at a time, and waits for each on its event stream
 * (`GET /runs/{id}/events`, the `end` event) before starting the next. The report's shape is kept
 * (docs/performance.md "Workflows"): `requests` = runs that ended Completed, `throughputRps` = runs
 * per second, latencies = `value(wall time)` of each Completed run; a start answered other than
 * 201 is non-2xx, a run that ended otherwise than Completed an error, one that did not end within
 * 30 s a timeout. The client's own view (POST sent to `end` received) is printed, not reported.
 */
export async function measureRuns(load: RunLoad): Promise<LoadResult> {
  const values: number[] = [];
  const clientMs: number[] = [];
  const counts = { errors: 0, timeouts: 0, non2xx: 0 };
  let started = 0;
  const begin = performance.now();
  const endAt = begin + load.durationSecs * 1000;
  const caller = async (): Promise<void> => {
    while (performance.now() < endAt) {
      const n = started++;
      const outcome = await runOnce(load.urls[n % load.urls.length]!, load.token, load.workflowId, `bench run ${n}`);
      if (outcome.kind === 'ended' && outcome.run.state === 'Completed' && outcome.run.completed_at !== null) {
        values.push(load.value(Date.parse(outcome.run.completed_at) - Date.parse(outcome.run.started_at)));
        clientMs.push(outcome.clientMs);
      } else if (outcome.kind === 'non2xx') counts.non2xx++;
      else if (outcome.kind === 'timeout') counts.timeouts++;
      else counts.errors++;
    }
  };
  await Promise.all(Array.from({ length: load.concurrency }, caller));
  const elapsedSecs = (performance.now() - begin) / 1000;
  const client = summarizeLatencies(clientMs);
  console.log(
    `  ${values.length} runs in ${elapsedSecs.toFixed(1)} s; client view, POST sent to end received: ` +
      `p50 ${client.latencyP50Ms.toFixed(2)} ms, p99 ${client.latencyP99Ms.toFixed(2)} ms`,
  );
  return selfTimedResult(values, elapsedSecs, counts);
}

/** Starts one run and reads its event stream up to the end; `clientMs` is POST sent to `end` received. */
export async function runOnce(url: string, token: string, workflowId: string, input: string): Promise<RunOutcome> {
  const signal = AbortSignal.timeout(RUN_TIMEOUT_MS);
  const sent = performance.now();
  try {
    const res = await fetch(`${url}/workflows/${workflowId}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...CLOSE },
      body: JSON.stringify({ input }),
      signal,
    });
    const body = await res.text();
    if (res.status !== 201) return { kind: 'non2xx' };
    const { id } = JSON.parse(body) as WorkflowRunStatus;
    const run = await endOf(url, token, id, signal);
    return { kind: 'ended', run, clientMs: performance.now() - sent };
  } catch {
    return { kind: signal.aborted ? 'timeout' : 'error' };
  }
}

/** Reads the run's event stream up to its `end` event and returns the run it carries. */
async function endOf(url: string, token: string, runId: string, signal: AbortSignal): Promise<WorkflowRunStatus> {
  const res = await fetch(`${url}/runs/${runId}/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...CLOSE }, signal });
  if (res.status !== 200 || res.body === null) throw new Error(`GET /runs/${runId}/events answered ${res.status}`);
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      if (!frame.startsWith('event: end\n')) continue;
      const data = frame.split('\n').find((line) => line.startsWith('data: '));
      if (data === undefined) throw new Error(`an end event without data: ${frame}`);
      return JSON.parse(data.slice('data: '.length)) as WorkflowRunStatus;
    }
  }
  throw new Error(`the event stream of run ${runId} closed before its end event`);
}
