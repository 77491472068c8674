import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The `remoteAddress` of the connection (who sent it). */
  from: string;
  /** The sender's port: with `pidOwningPort` (tests/support/fleet.ts), which process sent it. */
  from_port: number;
}

/**
 * What to answer the n-th request (1-based): a status, `{status, body, headers}`, or `'hold'`
 * (keep the request open, never answer: a receiver that hangs, or one still holding when its
 * sender is killed).
 */
export type ReceiverScript = (n: number, request: ReceivedRequest) => number | 'hold' | { status: number; body?: string; headers?: Record<string, string> };

export interface WebhookReceiver {
  /** `http://<host>:<port>` */
  readonly url: string;
  readonly port: number;
  readonly requests: ReceivedRequest[];
  /** Answers every request still held with `status`. */
  release(status?: number): void;
  close(): Promise<void>;
}

/**
 * A local HTTP server that records every request (webhook deliveries, SSRF canaries) and answers
 * as its script says; 200 to everything by default. `host` may be any loopback address
 * (127.0.0.2 stands in for a "public" peer in the D9 tests).
 */
export async function startWebhookReceiver(script: ReceiverScript = () => 200, host = '127.0.0.1'): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        from: req.socket.remoteAddress ?? '',
        from_port: req.socket.remotePort ?? 0,
      };
      requests.push(request);
      const answer = script(requests.length, request);
      if (answer === 'hold') return void held.push(res);
      const { status, body, headers } = typeof answer === 'number' ? { status: answer, body: undefined, headers: undefined } : answer;
      res.writeHead(status, headers);
      res.end(body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    release(status = 200) {
      for (const res of held.splice(0)) res.writeHead(status).end();
    },
    async close() {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
