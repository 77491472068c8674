import { summarizeLatencies } from './latency.ts';
import { runLoad } from './load.ts';
import { readRssBytes } from './node-process.ts';
import { publishArchive, type ArchivePool } from './publish-load.ts';
import { REGISTRY_SEARCH_QUERIES } from './registry-search.ts';
import type { LoadResult } from './target.ts';

export interface SearchWhilePublishingSettings {
  durationSecs: number;
  /** Clients searching at once (autocannon connections), each sending its next query on an answer. */
  searchers: number;
  publishesPerSec: number;
  /** The registry process whose RSS is sampled. */
  pid: number;
}

/** A search after a publish that had no answer after this long counts as a timeout (a publish: publish-load.ts). */
const TIMEOUT_MS = 10_000;
/** How often the registry's RSS is read. */
const RSS_EVERY_MS = 1000;

/**
 * Issue 25's search-while-publishing load: `searchers` clients run the search mix
 * (REGISTRY_SEARCH_QUERIES) while one publisher sends `POST /packages` at `publishesPerSec` (one
 * every 1/rate s; a publish slower than that delays the next). Right after each publish answers
 * 201, the publisher searches the package's name and checks that the version it just published is
 * the one shown (`not_found_after_publish` counts the times it is not: a stale index).
 *
 * The result's latencies are the search mix's; the details carry the publishes, the
 * publish-then-search latency, and the registry's RSS read every second: the highest in the middle
 * and in the last third of the run, and the growth between them in percent (the soak's rule).
 */
export async function runSearchWhilePublishing(
  url: string,
  pool: ArchivePool,
  settings: SearchWhilePublishingSettings,
): Promise<LoadResult> {
  const started = performance.now();
  const deadline = started + settings.durationSecs * 1000;
  const rss: number[] = [];
  const sampler = setInterval(() => {
    void readRssBytes(settings.pid).then((bytes) => {
      if (bytes !== null) rss.push(bytes / 2 ** 20);
    });
  }, RSS_EVERY_MS);
  const publishing = publish(url, pool, deadline, settings.publishesPerSec);
  try {
    const search = await runLoad([url], REGISTRY_SEARCH_QUERIES, {
      connections: settings.searchers,
      durationSecs: settings.durationSecs,
      pipelining: 1,
    });
    const published = await publishing;
    const third = Math.floor(rss.length / 3);
    const middle = Math.max(...rss.slice(third, rss.length - third));
    const last = Math.max(...rss.slice(rss.length - third));
    const after = summarizeLatencies(published.thenSearchMs);
    return {
      ...search,
      errors: search.errors + published.errors,
      timeouts: search.timeouts + published.timeouts,
      non2xx: search.non2xx + published.non2xx,
      details: {
        publishes: published.publishes,
        publish_p99_ms: round(summarizeLatencies(published.publishMs).latencyP99Ms),
        search_after_publish_p50_ms: round(after.latencyP50Ms),
        search_after_publish_p99_ms: round(after.latencyP99Ms),
        not_found_after_publish: published.stale,
        rss_middle_third_max_mb: Math.round(middle),
        rss_last_third_max_mb: Math.round(last),
        rss_growth_pct: round((last / middle - 1) * 100),
      },
    };
  } finally {
    clearInterval(sampler);
  }
}

interface Published {
  publishes: number;
  publishMs: number[];
  thenSearchMs: number[];
  stale: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}

async function publish(url: string, pool: ArchivePool, deadline: number, perSec: number): Promise<Published> {
  const out: Published = { publishes: 0, publishMs: [], thenSearchMs: [], stale: 0, errors: 0, timeouts: 0, non2xx: 0 };
  const every = 1000 / perSec;
  let next = performance.now();
  let refusal: string | null = null;
  while (performance.now() < deadline) {
    const archive = pool.next();
    if (archive === undefined) {
      console.error('  the archive pool ran out: publishing stopped before the end of the run');
      break;
    }
    const sent = performance.now();
    try {
      const { status, text } = await publishArchive(url, archive);
      if (status !== 201) {
        out.non2xx++;
        refusal ??= `${status} ${text.slice(0, 300)}`;
      } else {
        out.publishes++;
        out.publishMs.push(performance.now() - sent);
        const { name, version } = JSON.parse(text) as { name: string; version: string };
        const searched = performance.now();
        const found = await fetch(`${url}/search?q=${encodeURIComponent(name)}&per_page=1`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
        const page = (await found.json()) as { results?: Array<{ name: string; latest: string }> };
        out.thenSearchMs.push(performance.now() - searched);
        const first = page.results?.[0];
        if (found.status !== 200 || first?.name !== name || first.latest !== version) out.stale++;
      }
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') out.timeouts++;
      else out.errors++;
    }
    next += every;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else next = performance.now();
  }
  if (refusal !== null) console.error(`  ${out.non2xx} publishes refused, the first: ${refusal}`);
  return out;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
