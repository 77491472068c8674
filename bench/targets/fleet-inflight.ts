import { startFleetTarget, type FleetFixture } from '../fleet-fixture.ts';
import { selfTimedResult } from '../latency.ts';
import { readRssBytes } from '../node-process.ts';
import type { BenchTarget, LoadResult, LoadSettings } from '../target.ts';

/**
 * Issue 23's memory goal: one agent worker holding IN_FLIGHT invocations at once against a model
 * that waits MODEL_DELAY_MS per answer grows its RSS by at most 100 MB and answers all of them.
 * `[agents] worker_concurrency` is IN_FLIGHT, so every invocation is at the model together (none
 * waits for a slot). Bursts of IN_FLIGHT invokes (distinct correlation ids, no idempotency key)
 * are sent at once through the api node, one burst after the other until `--duration` is spent
 * (at least one); the worker's RSS is sampled every SAMPLE_MS from just before the first burst.
 * `--connections` is ignored: the load is the burst. Latency is each invoke's, about the model's wait.
 */
const IN_FLIGHT = 1_000;
const MODEL_DELAY_MS = 2_000;
const SAMPLE_MS = 100;
/** Invokes before the measurement, one at a time: JIT, pools and caches warmed. */
const WARM_UP = 20;

const MB = 1024 * 1024;

async function invoke(fleet: FleetFixture, n: number): Promise<number | string> {
  const started = performance.now();
  try {
    const res = await fetch(`${fleet.urls[0]}/agents/${fleet.agentId}/invoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fleet.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'Api', message: `in flight ${n}`, correlation_id: `inflight-${n}` }),
    });
    const body = (await res.json()) as { content?: unknown; error?: { code?: string; message?: string } };
    if (res.status !== 200) return `${res.status} ${body.error?.code ?? ''}: ${body.error?.message ?? ''}`;
    if (body.content !== `in flight ${n}`) return `200 with the wrong answer: ${JSON.stringify(body.content)}`;
    return performance.now() - started;
  } catch (error) {
    return `no answer: ${(error as Error).message}`;
  }
}

async function measureInFlight(fleet: FleetFixture, settings: LoadSettings): Promise<LoadResult> {
  const worker = fleet.processes.find((p) => p.role === 'agent-worker-1')!;
  const api = fleet.processes.find((p) => p.role === 'api-1')!;
  for (let i = 0; i < WARM_UP; i++) {
    const outcome = await invoke(fleet, -1 - i);
    if (typeof outcome === 'string') throw new Error(`warm-up invoke failed: ${outcome}`);
  }
  const rss = async (pid: number) => ((await readRssBytes(pid)) ?? 0) / MB;
  const workerBefore = await rss(worker.pid);
  let workerPeak = workerBefore;
  let apiPeak = await rss(api.pid);
  const sampler = setInterval(() => {
    void Promise.all([rss(worker.pid), rss(api.pid)]).then(([w, a]) => {
      workerPeak = Math.max(workerPeak, w);
      apiPeak = Math.max(apiPeak, a);
    });
  }, SAMPLE_MS);
  const latencies: number[] = [];
  const failures: string[] = [];
  let bursts = 0;
  const started = performance.now();
  try {
    do {
      const outcomes = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, i) => invoke(fleet, bursts * IN_FLIGHT + i)));
      for (const outcome of outcomes) {
        if (typeof outcome === 'number') latencies.push(outcome);
        else failures.push(outcome);
      }
      bursts++;
    } while (performance.now() - started < settings.durationSecs * 1000);
  } finally {
    clearInterval(sampler);
  }
  const elapsedSecs = (performance.now() - started) / 1000;
  const workerAfter = await rss(worker.pid);
  if (failures.length > 0) console.error(`fleet-inflight: ${failures.length} invokes failed, first: ${failures[0]}`);
  return {
    ...selfTimedResult(latencies, elapsedSecs, { errors: failures.length, timeouts: 0, non2xx: 0 }),
    details: {
      invocations: bursts * IN_FLIGHT,
      unanswered: failures.length,
      worker_rss_before_mb: Math.round(workerBefore),
      worker_rss_peak_mb: Math.round(workerPeak),
      worker_rss_growth_mb: Math.round(workerPeak - workerBefore),
      worker_rss_after_mb: Math.round(workerAfter),
      api_rss_peak_mb: Math.round(apiPeak),
    },
  };
}

export const fleetInFlight: BenchTarget = {
  name: 'fleet-inflight-1000',
  description:
    `1 api + 1 agent worker (worker_concurrency ${IN_FLIGHT}), model stand-in waiting ${MODEL_DELAY_MS} ms, ` +
    `bursts of ${IN_FLIGHT} invokes at once; req/s = answers/s, latency = each invoke's`,
  goals: [
    { kind: 'at-most', metric: 'detail:worker_rss_growth_mb', atMost: 100, label: `one worker holding ${IN_FLIGHT} in-flight invocations grows <= 100 MB` },
    { kind: 'at-most', metric: 'detail:unanswered', atMost: 0, label: `every one of ${IN_FLIGHT} in-flight invocations answered` },
  ],
  start: ({ nodeFlags }) =>
    startFleetTarget(
      { nodeFlags, apis: 1, workers: 1, model: { kind: 'stand-in', delayMs: MODEL_DELAY_MS }, workerConcurrency: IN_FLIGHT },
      (fleet, _request, settings) => measureInFlight(fleet, settings),
    ),
};
