/** One interval of a soak: its throughput and latencies, and the platform's RSS at its end. */
export interface SoakSample {
  atSecs: number;
  throughputRps: number;
  p50Ms: number;
  p99Ms: number;
  rssMb: number | null;
}

export interface SoakVerdict {
  flat: boolean;
  rss: string;
  p99: string;
}

/** How much the last third may exceed the middle third and still count as flat. */
const RSS_GROWTH_LIMIT = 1.1;
const P99_GROWTH_LIMIT = 1.5;

/**
 * Whether a soak stayed flat: the first third is warm-up (caches, the session reaching its full
 * length, the JIT) and is left out; the last third's highest RSS may exceed the middle third's by
 * at most 10 %, and its median p99 the middle third's by at most 50 % (p99 of a 30 s interval on
 * a shared machine is noisy). Fewer than three samples cannot say.
 */
export function soakVerdict(samples: readonly SoakSample[]): SoakVerdict {
  if (samples.length < 3) return { flat: false, rss: 'too few samples (at least 3)', p99: 'too few samples (at least 3)' };
  const third = Math.floor(samples.length / 3);
  const middle = samples.slice(third, samples.length - third);
  const last = samples.slice(samples.length - third);
  const rssOf = (part: readonly SoakSample[]) => Math.max(...part.map((s) => s.rssMb ?? Number.NaN));
  const [rssMiddle, rssLast] = [rssOf(middle), rssOf(last)];
  const [p99Middle, p99Last] = [median(middle.map((s) => s.p99Ms)), median(last.map((s) => s.p99Ms))];
  const rssFlat = Number.isFinite(rssMiddle) && Number.isFinite(rssLast) && rssLast <= rssMiddle * RSS_GROWTH_LIMIT;
  const p99Flat = p99Last <= p99Middle * P99_GROWTH_LIMIT;
  return {
    flat: rssFlat && p99Flat,
    rss: Number.isFinite(rssLast) ? `max ${rssMiddle.toFixed(0)} MB in the middle third, ${rssLast.toFixed(0)} MB in the last (limit +10 %)` : 'not read',
    p99: `median ${p99Middle.toFixed(2)} ms in the middle third, ${p99Last.toFixed(2)} ms in the last (limit +50 %)`,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
