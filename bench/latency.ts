import type { LoadResult } from './target.ts';

/**
 * p50, p99 and mean of latencies in milliseconds (nearest-rank percentiles). Shared by the
 * autocannon targets and by targets that time their own requests (a direct NATS request), so
 * that both sides of a latency comparison are computed the same way.
 */
export function summarizeLatencies(
  latenciesMs: number[],
): Pick<LoadResult, 'latencyP50Ms' | 'latencyP99Ms' | 'latencyMeanMs'> {
  if (latenciesMs.length === 0) return { latencyP50Ms: 0, latencyP99Ms: 0, latencyMeanMs: 0 };
  const sorted = Float64Array.from(latenciesMs).sort();
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
  const sum = sorted.reduce((a, b) => a + b, 0);
  return { latencyP50Ms: rank(0.5), latencyP99Ms: rank(0.99), latencyMeanMs: sum / sorted.length };
}

/**
 * The `LoadResult` of a target that times its own requests: `latenciesMs` of the ones that
 * succeeded, their count over the wall time of the run as throughput, and the failures counted.
 */
export function selfTimedResult(
  latenciesMs: number[],
  elapsedSecs: number,
  failures: Pick<LoadResult, 'errors' | 'timeouts' | 'non2xx'>,
): LoadResult {
  return {
    requests: latenciesMs.length,
    throughputRps: latenciesMs.length / elapsedSecs,
    ...summarizeLatencies(latenciesMs),
    ...failures,
  };
}
