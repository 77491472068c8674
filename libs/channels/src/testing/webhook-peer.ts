import type { IncomingHttpHeaders } from 'node:http';
import { verifyWebhook } from '@agent-platform/net';
import { startWebhookReceiver } from '@agent-platform/testkit';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  raw: string;
  /** The JSON body (`{channel_id, conversation, thread, text, in_reply_to}` for a channel reply). */
  body: Record<string, unknown>;
}

/** A local HTTP peer of the `webhook` kind: keeps every POST it accepted and answers `status` (default 200). */
export interface WebhookPeer {
  readonly url: string;
  /** The messages answered with a 2xx status (a refused one is not kept: its sender retries). */
  readonly received: ReceivedWebhook[];
  /** Whether a received message carries a valid Standard Webhooks signature under `secret`. */
  verified(message: ReceivedWebhook, secret: string): boolean;
  setStatus(status: number): void;
  close(): Promise<void>;
}

/**
 * The testkit's recording receiver, seen as the peer of one `webhook` channel. With `secret`, it
 * checks signatures as a real peer would: a POST not signed with it is answered 401 and not kept.
 */
export async function startWebhookPeer(options: { secret?: string; /** Default 127.0.0.1; a multi-host test's bridge address. */ host?: string } = {}): Promise<WebhookPeer> {
  const received: ReceivedWebhook[] = [];
  let status = 200;
  const receiver = await startWebhookReceiver((_n, request) => {
    if (options.secret !== undefined && !verifyWebhook(options.secret, request.headers, request.body, Math.floor(Date.now() / 1000)).ok)
      return { status: 401, body: '{"error":"bad signature"}', headers: { 'content-type': 'application/json' } };
    if (status < 300) received.push({ headers: request.headers, raw: request.body, body: parseObject(request.body) });
    return { status, body: '{}', headers: { 'content-type': 'application/json' } };
  }, options.host);
  return {
    url: `${receiver.url}/hook`,
    received,
    verified: (message, secret) => verifyWebhook(secret, message.headers, message.raw, Math.floor(Date.now() / 1000)).ok,
    setStatus: (next) => {
      status = next;
    },
    close: () => receiver.close(),
  };
}

function parseObject(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
