import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ApiApp } from '../api-app.ts';

export interface TestRequestOptions {
  /** An object is sent as JSON (Content-Type application/json); a string or Buffer is sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
}

export interface TestResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the response is JSON, else the text ('' for an empty body). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
  body: any;
}

function prepare(options: TestRequestOptions): { headers: Record<string, string>; payload: Buffer | undefined } {
  const headers: Record<string, string> = {};
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    const raw = typeof options.body === 'string' || Buffer.isBuffer(options.body);
    payload = raw ? Buffer.from(options.body as string | Buffer) : Buffer.from(JSON.stringify(options.body));
    if (!raw) headers['content-type'] = 'application/json';
  }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  // Explicit headers win, including removing a default by passing ''.
  for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
  return { headers, payload };
}

type HeaderValue = string | number | string[] | undefined;

function decode(status: number, headers: IncomingHttpHeaders | Record<string, HeaderValue>, text: string): TestResponse {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers as Record<string, HeaderValue>)) {
    if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  const json = (flat['content-type'] ?? '').includes('json') && text !== '';
  return { status, headers: flat, body: json ? JSON.parse(text) : text };
}

/**
 * One request over a real socket (node:http/https, so that unix sockets and self-signed TLS work
 * too, which global fetch cannot do without extra packages), or through `inject` when the test
 * api does not listen.
 */
export async function sendRequest(target: { url: string; app: ApiApp }, method: string, path: string, options: TestRequestOptions): Promise<TestResponse> {
  const { headers, payload } = prepare(options);
  if (target.url === '') {
    const res = await target.app.inject({ method: method as 'GET', url: path, headers, ...(payload ? { payload } : {}) });
    return decode(res.statusCode, res.headers, res.body);
  }
  const unix = target.url.startsWith('unix:') ? target.url.slice('unix:'.length) : null;
  const base = unix === null ? new URL(target.url) : null;
  const send = base?.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        method,
        path,
        // A fresh connection per request: a pooled keep-alive socket could outlive a restart.
        agent: false,
        headers: payload ? { ...headers, 'content-length': String(payload.length) } : headers,
        ...(unix !== null ? { socketPath: unix } : { hostname: base!.hostname.replace(/^\[|\]$/g, ''), port: base!.port }),
        ...(base?.protocol === 'https:' ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(decode(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
