import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export type PeerHandler = (
  request: IncomingMessage,
  body: Buffer,
  response: ServerResponse,
) => void | Promise<void>;

export interface HttpPeer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server for the local peers. Every response closes its connection, so a closed
 * channel leaves no keep-alive socket behind (the conformance suite checks that nothing is left).
 */
export async function startHttpPeer(handler: PeerHandler): Promise<HttpPeer> {
  const server = createServer((request, response) => {
    response.setHeader('connection', 'close');
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      Promise.resolve(handler(request, Buffer.concat(chunks), response)).catch((error: unknown) => {
        if (!response.headersSent) sendJson(response, 500, { ok: false, error: (error as Error).message });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('could not read the peer port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}

/** JSON or form bodies (the Web APIs accept both); an empty object for anything else. */
export function parseBody(request: IncomingMessage, body: Buffer): Record<string, unknown> {
  const text = body.toString('utf8');
  if ((request.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(text));
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return Object.fromEntries(new URL(request.url ?? '/', 'http://peer').searchParams);
  }
}
