import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Raised when no TCP connection was made within the connect timeout. */
export class ConnectTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no connection within ${timeoutMs} ms`);
    this.name = 'ConnectTimeoutError';
  }
}

export interface HttpPost {
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** Aborting destroys the request, or the response while its body is being read. */
  signal: AbortSignal;
  connectTimeoutMs: number;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as it arrives; iterating it rejects when the connection breaks or is aborted. */
  body: IncomingMessage;
}

/**
 * One POST over node:http(s). Not `fetch`: Node 20's fetch (undici) cannot be given its own
 * timeouts without the undici package, and its built-in defaults (10 s to connect, 300 s to the
 * response headers and between body chunks) contradict spec §Limits (connect 30 s, request 600 s).
 * node:http has no hidden timeouts: the connect timer here and the caller's signal are all there is.
 */
export function postHttp(call: HttpPost): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const send = call.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(call.url, {
      method: 'POST',
      headers: { ...call.headers, 'content-length': String(Buffer.byteLength(call.body)) },
      signal: call.signal,
    });
    req.once('socket', (socket) => {
      // A reused keep-alive socket is already connected; only a fresh one can hang in connect.
      if (!socket.connecting) return;
      const timer = setTimeout(() => req.destroy(new ConnectTimeoutError(call.connectTimeoutMs)), call.connectTimeoutMs);
      const clear = (): void => clearTimeout(timer);
      socket.once('connect', clear);
      socket.once('close', clear);
    });
    req.once('response', (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }));
    // on, not once: a request can emit a second error (e.g. abort after a failed connect).
    req.on('error', reject);
    req.end(call.body);
  });
}

/** Reads a whole body as text, refusing more than `maxBytes` (a broken upstream must not exhaust memory). */
export async function readText(body: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw new RangeError(`response body is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
