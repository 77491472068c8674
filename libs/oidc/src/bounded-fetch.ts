/** Limits of one request to an issuer's discovery or JWKS endpoint. */
export interface FetchLimits {
  /** The whole exchange, body included. */
  timeoutMs: number;
  /** Larger bodies are abandoned (a JWKS is a few kilobytes). */
  maxBytes: number;
}

/**
 * GETs a JSON document from an issuer's endpoint with a deadline and a size cap, following no
 * redirect (a redirect could lead anywhere; the operator configures the real URL). Throws an
 * Error whose message names the URL and what went wrong (never a response body).
 */
export async function fetchJson(url: string, limits: FetchLimits): Promise<unknown> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { signal, redirect: 'error', headers: { accept: 'application/json' } });
  } catch (cause) {
    throw new Error(`${url}: ${signal.aborted ? `no answer within ${limits.timeoutMs} ms` : 'unreachable'}`, { cause });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url}: HTTP ${response.status}`);
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > limits.maxBytes) {
    await response.body?.cancel();
    throw new Error(`${url}: ${declared} bytes, over the ${limits.maxBytes} byte limit`);
  }
  const text = await readCapped(response, url, limits, signal);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${url}: not JSON`);
  }
}

async function readCapped(response: Response, url: string, limits: FetchLimits, signal: AbortSignal): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxBytes) {
        await reader.cancel();
        throw new Error(`${url}: over the ${limits.maxBytes} byte limit`);
      }
      chunks.push(value);
    }
  } catch (cause) {
    if (signal.aborted) throw new Error(`${url}: no answer within ${limits.timeoutMs} ms`, { cause });
    throw cause;
  }
  return Buffer.concat(chunks).toString('utf8');
}
