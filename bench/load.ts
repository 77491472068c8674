import autocannon from 'autocannon';
import { summarizeLatencies } from './latency.ts';
import type { BenchRequest, LoadResult, LoadSettings } from './target.ts';

/** Seconds a single request may take before autocannon counts it as a timeout. */
const REQUEST_TIMEOUT_SECS = 10;

/**
 * Drives `request` against every URL of a target with autocannon: connections are spread over
 * the URLs round-robin, so a fleet of api nodes is measured as one system. Latencies are taken
 * from autocannon's per-response event, in fractional milliseconds: its own histogram keeps
 * whole milliseconds, too coarse for a sub-millisecond goal.
 */
export async function runLoad(
  urls: string[],
  request: BenchRequest | readonly BenchRequest[],
  settings: LoadSettings,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const common = {
    connections: settings.connections,
    duration: settings.durationSecs,
    pipelining: settings.pipelining,
    timeout: REQUEST_TIMEOUT_SECS,
  };
  // A mix (the registry search queries): each connection cycles through the requests in order.
  const instance = isMix(request)
    ? autocannon({ ...common, url: urls, requests: request.map((r) => ({ ...r })) })
    : autocannon({
        ...common,
        url: urls.map((u) => `${u}${request.path}`),
        method: request.method,
        ...(request.headers === undefined ? {} : { headers: request.headers }),
        ...(request.body === undefined ? {} : { body: request.body }),
      });
  instance.on('response', (_client, _status, _bytes, latencyMs) => latencies.push(latencyMs));
  const result = await instance;
  return {
    requests: result.requests.total,
    throughputRps: result.requests.average,
    ...summarizeLatencies(latencies),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  };
}

function isMix(request: BenchRequest | readonly BenchRequest[]): request is readonly BenchRequest[] {
  return Array.isArray(request);
}

/**
 * One request per URL before any load: a target answering 401 or 404 would otherwise be
 * "measured" at the speed of its error path. Throws with the status and body.
 */
export async function checkOnce(urls: string[], request: BenchRequest): Promise<void> {
  for (const url of urls) {
    const res = await fetch(`${url}${request.path}`, {
      method: request.method,
      headers: request.headers ?? {},
      body: request.body ?? null,
    });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) {
      throw new Error(
        `${request.method} ${url}${request.path} answered ${res.status} before the run: ${text}`,
      );
    }
  }
}

/** A run with any error, timeout or non-2xx answer measured something else than the target. */
export function isValid(result: LoadResult): boolean {
  return result.errors === 0 && result.timeouts === 0 && result.non2xx === 0;
}
