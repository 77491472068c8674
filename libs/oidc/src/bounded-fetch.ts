import { guardedFetch, PrivateTargetError, readCappedBody } from '@agent-platform/net';

/** Limits of one request to an issuer's discovery or JWKS endpoint. */
export interface FetchLimits {
  /** The whole exchange, body included. */
  timeoutMs: number;
  /** Larger bodies are abandoned (a JWKS is a few kilobytes). */
  maxBytes: number;
  /**
   * Whether loopback, private, link-local and unique-local addresses may be reached (DECISIONS
   * D9): true for issuers the operator wrote in the config file, `[network] allow_private_targets`
   * for issuers registered through an API.
   */
  allowPrivateTargets: () => boolean;
}

/**
 * GETs a JSON document from an issuer's endpoint with a deadline and a size cap, following no
 * redirect (a redirect could lead anywhere; the operator configures the real URL). The request
 * goes through the D9 guard (libs/net `guardedFetch`): the address actually connected to, after
 * DNS, is refused when private unless `allowPrivateTargets()`. Throws an Error whose message
 * names the URL and what went wrong (never a response body).
 */
export async function fetchJson(url: string, limits: FetchLimits): Promise<unknown> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    response = await guardedFetch(limits.allowPrivateTargets)(url, { signal, redirect: 'error', headers: { accept: 'application/json' } });
  } catch (cause) {
    throw new Error(`${url}: ${signal.aborted ? `no answer within ${limits.timeoutMs} ms` : unreachable(cause)}`, { cause });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url}: HTTP ${response.status}`);
  }
  let body: Uint8Array | null;
  try {
    body = await readCappedBody(response, limits.maxBytes);
  } catch (cause) {
    if (signal.aborted) throw new Error(`${url}: no answer within ${limits.timeoutMs} ms`, { cause });
    throw cause;
  }
  if (body === null) throw new Error(`${url}: over the ${limits.maxBytes} byte limit`);
  const text = new TextDecoder().decode(body);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${url}: not JSON`);
  }
}

/** A refused private target says so (and how to lift it); any other failure is just unreachable. */
function unreachable(cause: unknown): string {
  return cause instanceof PrivateTargetError ? cause.message : 'unreachable';
}
