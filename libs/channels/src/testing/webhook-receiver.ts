import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '@agent-platform/net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  raw: string;
  /** The JSON body (`{channel_id, conversation, thread, text, in_reply_to}` for a channel reply). */
  body: Record<string, unknown>;
}

/** A local HTTP peer of the `webhook` kind: records every POST and answers `status` (default 200). */
export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Whether a received message carries a valid Standard Webhooks signature under `secret`. */
  verified(message: ReceivedWebhook, secret: string): boolean;
  setStatus(status: number): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let status = 200;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        body = {};
      }
      if (status < 300) received.push({ headers: request.headers, raw, body });
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    verified: (message, secret) =>
      verifyWebhook(secret, message.headers, message.raw, Math.floor(Date.now() / 1000)).ok,
    setStatus: (next) => {
      status = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
