import type { ConnectorProbe } from '@agent-platform/domain';

/**
 * The connector probe over HTTP: a GET of the configured reachability URL, timed to the response
 * headers. Redirects are not followed (a 3xx is an answer). Config URLs are operator-trusted
 * (DECISIONS D9), so no private-network check applies. The body is discarded unread.
 */
export const httpProbe: ConnectorProbe = async (url, signal) => {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'GET',
      redirect: 'manual',
      signal,
      headers: { accept: '*/*' },
    });
    const latency_ms = performance.now() - started;
    await response.body?.cancel().catch(() => undefined);
    return { ok: true, status: response.status, latency_ms };
  } catch (error) {
    return { ok: false, error: reason(error) };
  }
};

/** fetch's "fetch failed" hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, a TLS error). */
function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code !== undefined) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  if (cause?.message !== undefined) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
