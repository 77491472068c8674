import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { isPrivateAddress, PrivateTargetError } from './private-target.ts';

/** One outbound request to a URL that came through the API (a webhook target). */
export interface GuardedRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export interface GuardedRequestOptions {
  /** `[network] allow_private_targets` (DECISIONS D9). */
  allowPrivate: boolean;
  /** Bound on everything: resolving, connecting, sending and reading the answer. */
  timeoutMs: number;
  /** Bytes of the answer's body read at most; past it the connection is closed. */
  maxResponseBytes: number;
  /** What counts as private; `isPrivateAddress` unless a test simulates a public address. */
  isPrivate?: (address: string) => boolean;
  /** The resolver; `dns.lookup` (all addresses) unless a test controls a name. */
  resolve?: (hostname: string) => Promise<ReadonlyArray<{ address: string }>>;
}

export interface GuardedResponse {
  status: number;
  headers: IncomingMessage['headers'];
  /** At most `maxResponseBytes` of the body. */
  body: Buffer;
  /** True when the body was longer and the rest was not read. */
  truncated: boolean;
  /** The address the socket was connected to (checked against D9). */
  remote_address: string;
}

/**
 * One HTTP request to an API-supplied URL under DECISIONS D9, made so that no check can be
 * raced:
 * - the name is resolved once, every address it has is checked, and the socket is connected to
 *   the checked address itself (never re-resolved, so DNS rebinding between check and connect is
 *   impossible); IP literals, in any spelling the URL parser accepts, are checked the same way;
 * - once connected, `socket.remoteAddress` is checked again before a byte is sent;
 * - redirects are never followed: a 3xx is returned like any answer (webhook receivers answer
 *   2xx; following a `Location` would be a second, unchecked-by-the-caller target);
 * - `timeoutMs` bounds the whole exchange and at most `maxResponseBytes` of the answer are read.
 * Errors: `PrivateTargetError` for a refused target, otherwise the network error, or a
 * `TimeoutError` naming the bound.
 */
export async function sendGuarded(request: GuardedRequest, options: GuardedRequestOptions): Promise<GuardedResponse> {
  const url = new URL(request.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`${url.protocol} URLs are not supported (http or https only)`);
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(Object.assign(new Error(`no complete answer within ${options.timeoutMs} ms`), { name: 'TimeoutError' })),
    options.timeoutMs,
  );
  try {
    const socket = await connectChecked(url, options, controller.signal);
    return await exchange(url, request, socket, options.maxResponseBytes, controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

function refuses(options: GuardedRequestOptions): (address: string) => boolean {
  const isPrivate = options.isPrivate ?? isPrivateAddress;
  return (address) => !options.allowPrivate && isPrivate(address);
}

async function resolveChecked(url: URL, options: GuardedRequestOptions): Promise<string> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refused = refuses(options);
  if (isIP(host) !== 0) {
    if (refused(host)) throw new PrivateTargetError(url.hostname, host);
    return host;
  }
  const lower = host.toLowerCase().replace(/\.$/, '');
  if (!options.allowPrivate && (lower === 'localhost' || lower.endsWith('.localhost'))) throw new PrivateTargetError(url.hostname, '127.0.0.1');
  const resolve = options.resolve ?? ((name: string) => dnsLookup(name, { all: true }));
  const addresses = await resolve(host);
  const bad = addresses.find((a) => refused(a.address));
  if (bad !== undefined) throw new PrivateTargetError(url.hostname, bad.address);
  const first = addresses[0];
  if (first === undefined) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  return first.address;
}

async function connectChecked(url: URL, options: GuardedRequestOptions, signal: AbortSignal): Promise<Socket> {
  const address = await resolveChecked(url, options);
  signal.throwIfAborted();
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const raw = await new Promise<Socket>((resolve, reject) => {
    const socket = netConnect({ host: address, port });
    const onAbort = (): void => void socket.destroy(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    socket.once('connect', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(socket);
    });
  });
  const connected = raw.remoteAddress ?? '';
  if (connected === '' || refuses(options)(connected)) {
    raw.destroy();
    throw new PrivateTargetError(url.hostname, connected || 'an unknown address');
  }
  if (url.protocol === 'http:') return raw;
  // The certificate is checked against the URL's host (a name, or an IP literal's SAN), SNI for names.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const servername = isIP(host) === 0 ? host : undefined;
  return await new Promise<Socket>((resolve, reject) => {
    const tls = tlsConnect({ socket: raw, host, ...(servername === undefined ? {} : { servername }), ALPNProtocols: ['http/1.1'] });
    // A peer that accepts TCP and never finishes the handshake is cut off by the same bound.
    const onAbort = (): void => void tls.destroy(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    tls.once('error', (error: Error) => {
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    tls.once('secureConnect', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(tls);
    });
  });
}

function exchange(url: URL, call: GuardedRequest, socket: Socket, maxBytes: number, signal: AbortSignal): Promise<GuardedResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...call.headers, connection: 'close' };
    if (call.body !== undefined) headers['content-length'] = String(Buffer.byteLength(call.body));
    const remote_address = socket.remoteAddress ?? '';
    const req = httpRequest(url, { method: call.method, headers, createConnection: () => socket, signal });
    req.once('error', (error) => {
      socket.destroy();
      reject(signal.aborted ? (signal.reason as Error) : error);
    });
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const finish = (): void => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated, remote_address });
      };
      res.on('data', (chunk: Buffer) => {
        if (truncated) return;
        const room = maxBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size = maxBytes;
          truncated = true;
          res.destroy();
          socket.destroy();
          finish();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.once('end', finish);
      res.once('error', (error) => (truncated ? undefined : reject(signal.aborted ? (signal.reason as Error) : error)));
    });
    req.end(call.body);
  });
}

/** `sendGuarded` as a POST-only transport whose options are read per request (they follow config reloads). */
export function guardedPoster(
  options: () => GuardedRequestOptions,
): (request: { url: string; headers: Record<string, string>; body: string }) => Promise<GuardedResponse> {
  return (request) => sendGuarded({ ...request, method: 'POST' }, options());
}
