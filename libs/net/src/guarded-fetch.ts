import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { checkUrlTarget, guardedLookup } from './private-target.ts';

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

const MAX_REDIRECTS = 5;
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * `fetch` for URLs that came from a package (DECISIONS D9): over node:http(s) with
 * `guardedLookup`, so every connection, redirects included, is checked against private
 * networks on the address actually used. `redirect: 'manual'` hands redirects back (the MCP SDK
 * follows them itself, through this same function); the default follows at most 5, each checked.
 * Only what the MCP SDK and the REST adapter send is supported: string or byte bodies.
 */
export function guardedFetch(allowPrivate: () => boolean): FetchLike {
  return async (input, init = {}) => {
    let url = new URL(input instanceof URL ? input.href : input);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = bodyBytes(init.body);
    const headers = new Headers(init.headers);
    for (let hop = 0; ; hop += 1) {
      const allow = allowPrivate();
      checkUrlTarget(url, allow);
      const response = await requestOnce(url, {
        method,
        headers,
        body,
        signal: init.signal ?? undefined,
        allowPrivate: allow,
      });
      const location = response.headers.get('location');
      const redirected = response.status >= 300 && response.status < 400 && location !== null;
      if (!redirected || init.redirect === 'manual') return response;
      await response.body?.cancel();
      if (init.redirect === 'error') throw new TypeError(`redirected to ${location} (redirect: error)`);
      if (hop >= MAX_REDIRECTS)
        throw new TypeError(`more than ${MAX_REDIRECTS} redirects from ${String(input)}`);
      url = new URL(location, url);
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
        headers.delete('content-type');
      }
    }
  };
}

function bodyBytes(body: RequestInit['body']): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('guardedFetch sends string or byte bodies only');
}

interface OneRequest {
  method: string;
  headers: Headers;
  body: Uint8Array | undefined;
  signal: AbortSignal | undefined;
  allowPrivate: boolean;
}

function requestOnce(url: URL, call: OneRequest): Promise<Response> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers: Record<string, string> = {};
    call.headers.forEach((value, key) => (headers[key] = value));
    if (call.body !== undefined) headers['content-length'] = String(call.body.byteLength);
    const req = send(url, {
      method: call.method,
      headers,
      lookup: guardedLookup(call.allowPrivate),
      ...(call.signal === undefined ? {} : { signal: call.signal }),
    });
    req.on('error', reject);
    req.once('response', (res) => resolve(toResponse(res, call.method)));
    req.end(call.body);
  });
}

function toResponse(res: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [key, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else if (value !== undefined) headers.set(key, value);
  }
  const status = res.statusCode ?? 502;
  const empty = NULL_BODY.has(status) || method === 'HEAD';
  if (empty) res.resume();
  const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
}
