/** Where and how the registry's revocation feed is read (`[catalog]`, resolved per call so reloads apply). */
export interface FeedSource {
  /** `[catalog] registry_url`. */
  registryUrl: string;
  timeoutMs: number;
  /** The registry key or token from the variable `[catalog] registry_key_env` names; null: anonymous. */
  bearer: string | null;
}

export class FeedFetchError extends Error {}

/**
 * `GET <registry_url>/revocations?since=<seq>` -> the compact JWS of its `{feed}` body
 * (docs/registry.md "Revocation feed"). Throws `FeedFetchError` with a message fit for a log line:
 * never the bearer, which only travels in the Authorization header.
 */
export async function fetchRevocationFeed(source: FeedSource, since: number, fetchImpl: typeof fetch = fetch, stop?: AbortSignal): Promise<string> {
  const url = new URL('revocations', source.registryUrl.endsWith('/') ? source.registryUrl : `${source.registryUrl}/`);
  url.searchParams.set('since', String(since));
  let response: Response;
  try {
    response = await fetchImpl(url, {
      headers: { accept: 'application/json', ...(source.bearer === null ? {} : { authorization: `Bearer ${source.bearer}` }) },
      signal: stop === undefined ? AbortSignal.timeout(source.timeoutMs) : AbortSignal.any([AbortSignal.timeout(source.timeoutMs), stop]),
    });
  } catch (error) {
    const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${source.timeoutMs} ms` : String((error as Error).message);
    throw new FeedFetchError(`GET ${url.origin}${url.pathname} failed: ${reason}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new FeedFetchError(`GET ${url.origin}${url.pathname} answered ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new FeedFetchError(`GET ${url.origin}${url.pathname} answered a body that is not JSON`);
  }
  const feed = feedOf(body);
  if (feed === null) throw new FeedFetchError(`GET ${url.origin}${url.pathname} answered no "feed" string`);
  return feed;
}

/** The JWS of a `RevocationFeed` body (`{feed}`), or of a bare string; null otherwise. */
export function feedOf(body: unknown): string | null {
  if (typeof body === 'string') return body;
  if (typeof body === 'object' && body !== null && typeof (body as { feed?: unknown }).feed === 'string') return (body as { feed: string }).feed;
  return null;
}
