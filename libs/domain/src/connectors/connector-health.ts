import { CONNECTORS, type ConnectorHealthItem, type PlatformConfig } from '@agent-platform/contracts';

/** What one probe saw: an answer (any HTTP status) after `latency_ms`, or a failure. */
export type ProbeResult = { ok: true; status: number; latency_ms: number } | { ok: false; error: string };

/**
 * The port a connector probe goes through (adapter: apps/api/src/connectors/http-probe.ts). It
 * must give up when `signal` aborts; `checkConnectors` does not rely on that for its own bound.
 */
export type ConnectorProbe = (url: string, signal: AbortSignal) => Promise<ProbeResult>;

type Settings = PlatformConfig['connectors'];

/**
 * GET /connectors/health (docs/connectors.md): the six fixed connectors, probed concurrently.
 * `NotConfigured` without a URL; `Unreachable` when the probe failed, timed out, or the answer
 * was a 5xx; else `Healthy` within `latency_budget_ms`, `Degraded` over it. Resolves within
 * `timeout_ms` (plus scheduling) whatever the probes do: a probe still running then is cut off
 * and reported Unreachable.
 */
export async function checkConnectors(
  settings: Settings,
  probe: ConnectorProbe,
): Promise<ConnectorHealthItem[]> {
  return Promise.all(
    CONNECTORS.map(async ({ id, name }): Promise<ConnectorHealthItem> => {
      const url = settings.urls[id];
      if (url === undefined) return { id, name, status: 'NotConfigured', latency_ms: null, error: null };
      const result = await bounded(probe, url, settings.timeout_ms);
      return { id, name, ...classify(result, settings.latency_budget_ms) };
    }),
  );
}

function classify(
  result: ProbeResult,
  budgetMs: number,
): Pick<ConnectorHealthItem, 'status' | 'latency_ms' | 'error'> {
  if (!result.ok) return { status: 'Unreachable', latency_ms: null, error: result.error };
  const latency_ms = Math.max(0, Math.round(result.latency_ms));
  // A 5xx is the service saying it cannot serve; a 4xx still proves it is there and answering.
  if (result.status >= 500)
    return { status: 'Unreachable', latency_ms, error: `answered HTTP ${result.status}` };
  if (latency_ms > budgetMs)
    return {
      status: 'Degraded',
      latency_ms,
      error: `answered in ${latency_ms} ms, over the ${budgetMs} ms latency budget`,
    };
  return { status: 'Healthy', latency_ms, error: null };
}

/** The probe, aborted at `timeoutMs`, and raced against a timer in case it ignores the abort. */
async function bounded(probe: ConnectorProbe, url: string, timeoutMs: number): Promise<ProbeResult> {
  const controller = new AbortController();
  const timedOut: ProbeResult = { ok: false, error: `no answer within ${timeoutMs} ms` };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ProbeResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(timedOut);
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      probe(url, controller.signal).then(
        (result) => (controller.signal.aborted ? timedOut : result),
        (error: unknown) =>
          controller.signal.aborted ? timedOut : { ok: false as const, error: describe(error) },
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
