import { summarizeLatencies } from './latency.ts';

// The tool-call journal targets measure several variants of one request in the same process,
// interleaved (docs/performance.md "Tool-call journal (issue 20)"): what each variant costs, and
// what one costs more than another, as named numbers for the report's details table.

/** What one variant gave over a run: each answered request's latency, and the target's CPU time spent in its blocks. */
export interface VariantSample {
  latenciesMs: number[];
  cpuMs: number;
}

/** `name` = `more` minus `less`, at p50 (ms) and in CPU per request (µs). */
export interface VariantComparison {
  name: string;
  more: string;
  less: string;
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Per variant `<v>_n`, `<v>_p50_ms`, `<v>_p99_ms`, `<v>_mean_ms` and `<v>_cpu_us` (the target's
 * CPU per request), then per comparison `<name>_p50_ms` and `<name>_cpu_us`. A comparison with a
 * variant that answered nothing is left out rather than reported as a difference with zero.
 */
export function variantDetails(
  samples: ReadonlyMap<string, VariantSample>,
  comparisons: readonly VariantComparison[],
): Record<string, number> {
  const details: Record<string, number> = {};
  const summary = new Map<string, { p50: number; cpuUs: number }>();
  for (const [variant, sample] of samples) {
    const n = sample.latenciesMs.length;
    const latency = summarizeLatencies(sample.latenciesMs);
    const cpuUs = n === 0 ? 0 : (sample.cpuMs * 1000) / n;
    details[`${variant}_n`] = n;
    details[`${variant}_p50_ms`] = round(latency.latencyP50Ms, 3);
    details[`${variant}_p99_ms`] = round(latency.latencyP99Ms, 3);
    details[`${variant}_mean_ms`] = round(latency.latencyMeanMs, 3);
    details[`${variant}_cpu_us`] = Math.round(cpuUs);
    if (n > 0) summary.set(variant, { p50: latency.latencyP50Ms, cpuUs });
  }
  for (const { name, more, less } of comparisons) {
    const a = summary.get(more);
    const b = summary.get(less);
    if (a === undefined || b === undefined) continue;
    details[`${name}_p50_ms`] = round(a.p50 - b.p50, 3);
    details[`${name}_cpu_us`] = Math.round(a.cpuUs - b.cpuUs);
  }
  return details;
}
