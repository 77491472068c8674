import { randomUUID } from 'node:crypto';
import type { ChannelOutbound } from '@agent-platform/contracts';
import { signWebhook, verifyWebhook } from '@agent-platform/net';
import {
  ChannelConfigError,
  REPLY_ID_META,
  refusedInbound,
  type ChannelConfig,
  type ChannelConnection,
  type ChannelContext,
  type ChannelKind,
  type HttpInboundRequest,
  type HttpInboundResult,
  type InboundMessage,
} from '../channel-kind.ts';

/** How long an outbound POST may take before the reply is retried later. */
const SEND_TIMEOUT_MS = 10_000;

/**
 * The `webhook` kind (docs/channels.md "The webhook kind"): signed HTTP in both directions with
 * Standard Webhooks (libs/net).
 *
 * - In: `POST /channels/{id}/inbound` signed with the channel's `secret`, JSON body
 *   `{id?, conversation, text, sender?, thread?}`. The peer's message id is `id`, or the
 *   `webhook-id` header without it: a repeated request is one bus message (de-duplicated by id),
 *   and one older than the tolerance (`tolerance_secs`, default 300) is refused as a replay.
 * - Out: each reply is POSTed as JSON `{channel_id, conversation, thread, text, in_reply_to}` to
 *   `url`, signed the same way (through the guarded fetch: private targets per D9). A non-2xx
 *   answer fails the send, which the bridge retries.
 * - Status: there is no peer to ask at open (the secret is shared, not checked by a login), so a
 *   channel is `Connected` once open; a reply the peer answers 401 or 403 (it refuses the
 *   signature) turns it into `{Error}`, and the next reply it accepts back into `Connected`.
 */
export const webhookKind: ChannelKind = {
  kind: 'webhook',
  fields: ['secret', 'url', 'tolerance_secs'],
  secretFields: ['secret'],
  // Replies are signed with the secret and POSTed there.
  destinationFields: ['url'],
  check(config) {
    secretOf(config);
    urlOf(config);
    toleranceOf(config);
  },
  async open(context) {
    const url = urlOf(context.config);
    const secret = secretOf(context.config);
    context.setStatus('Connected');
    return webhookConnection(context, secret, url);
  },
  receiveHttp(config, request) {
    return receive(config, request);
  },
};

function webhookConnection(context: ChannelContext, secret: string, url: string | null): ChannelConnection {
  let refused = false;
  let closed = false;
  return {
    async send(message: ChannelOutbound) {
      if (closed) throw new Error(`webhook channel '${context.channelId}' is closed`);
      if (url === null) throw new Error(`webhook channel '${context.channelId}' has no config.url to send replies to`);
      const body = JSON.stringify({
        channel_id: message.channel_id,
        conversation: message.conversation,
        thread: message.thread,
        text: message.text,
        in_reply_to: message.in_reply_to,
      });
      const id = message.meta[REPLY_ID_META] ?? `msg_${randomUUID()}`;
      const headers = { 'content-type': 'application/json', ...signWebhook(secret, id, Math.floor(Date.now() / 1000), body) };
      const response = await context.fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
      await response.body?.cancel();
      if (response.status === 401 || response.status === 403) {
        refused = true;
        context.setStatus({ Error: `the webhook peer refused the signature (HTTP ${response.status}): check config.secret on both sides` });
      } else if (response.ok && refused) {
        refused = false;
        context.setStatus('Connected');
      }
      if (!response.ok) throw new Error(`the webhook peer answered ${response.status}`);
    },
    async close() {
      closed = true;
    },
  };
}

function receive(config: ChannelConfig, request: HttpInboundRequest): HttpInboundResult {
  const verified = verifyWebhook(secretOf(config), request.headers, request.rawBody, Math.floor(request.now.getTime() / 1000), toleranceOf(config));
  if (!verified.ok) return refusedInbound(401, `signature refused: ${verified.reason}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(request.rawBody.toString('utf8'));
  } catch {
    return refused('the body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return refused('the body is not a JSON object');
  const body = parsed as Record<string, unknown>;
  for (const field of ['conversation', 'text'] as const)
    if (typeof body[field] !== 'string' || (field === 'conversation' && body[field] === '')) return refused(`body.${field} must be a string${field === 'conversation' ? ' (not empty)' : ''}`);
  for (const field of ['id', 'sender', 'thread'] as const)
    if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'string') return refused(`body.${field} must be a string`);
  const peerId = typeof body['id'] === 'string' && body['id'] !== '' ? body['id'] : verified.id;
  const message: InboundMessage = {
    peer_message_id: peerId,
    conversation: body['conversation'] as string,
    thread: typeof body['thread'] === 'string' ? body['thread'] : null,
    sender: typeof body['sender'] === 'string' ? body['sender'] : '',
    text: body['text'] as string,
    received_at: request.now.toISOString(),
    meta: {},
  };
  return { status: 202, body: { status: 'accepted', id: peerId }, messages: [message] };
}

const refused = (reason: string): HttpInboundResult => refusedInbound(400, reason);

function secretOf(config: ChannelConfig): string {
  const secret = config['secret'];
  if (typeof secret !== 'string' || secret === '') throw new ChannelConfigError('secret', 'config.secret is required: the Standard Webhooks secret (whsec_<base64>)');
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || Buffer.from(encoded, 'base64').length < 16)
    throw new ChannelConfigError('secret', 'config.secret must be whsec_ followed by base64 of at least 16 bytes');
  return secret;
}

function urlOf(config: ChannelConfig): string | null {
  const url = config['url'];
  if (url === undefined || url === null) return null;
  if (typeof url !== 'string') throw new ChannelConfigError('url', 'config.url must be a string (an http or https URL)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ChannelConfigError('url', `config.url is not a URL: '${url.slice(0, 100)}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ChannelConfigError('url', 'config.url must be an http or https URL');
  return url;
}

function toleranceOf(config: ChannelConfig): number {
  const value = config['tolerance_secs'];
  if (value === undefined) return 300;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 3600)
    throw new ChannelConfigError('tolerance_secs', 'config.tolerance_secs must be an integer from 1 to 3600');
  return value;
}
