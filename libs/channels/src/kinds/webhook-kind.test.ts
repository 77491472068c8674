import { createLogger } from '@agent-platform/observability';
import { guardedFetch, newWebhookSecret, signWebhook } from '@agent-platform/net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelConfigError, ChannelStatus } from '../channel-kind.ts';
import { channelKindConformance } from '../testing/channel-kind-conformance.ts';
import { startWebhookPeer, type WebhookPeer } from '../testing/webhook-peer.ts';
import { webhookKind } from './webhook-kind.ts';

const secret = newWebhookSecret();
const now = new Date();
const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });

// The suite every kind passes: inbound through the stand-in api node (as POST /channels/{id}/inbound),
// out to a peer that checks the signature. The peer refuses credentials only when a reply is sent.
channelKindConformance(webhookKind, async ({ inboundUrl }) => {
  const peerSecret = newWebhookSecret();
  const peer = await startWebhookPeer({ secret: peerSecret });
  const config = { secret: peerSecret, url: peer.url };
  let seq = 0;
  return {
    goodConfig: config,
    badCredentialsConfig: { ...config, secret: newWebhookSecret() },
    badCredentialsError: /the webhook peer refused the signature \(HTTP 401\)/,
    credentialsCheckedOnSend: true,
    badConfigs: [
      { why: 'no secret', config: { url: peer.url }, field: 'secret' },
      { why: 'secret too short', config: { ...config, secret: 'whsec_c2hvcnQ=' }, field: 'secret' },
      { why: 'url not http', config: { ...config, url: 'ftp://peer.example/hook' }, field: 'url' },
      { why: 'tolerance out of range', config: { ...config, tolerance_secs: 86_400 }, field: 'tolerance_secs' },
    ],
    async sendInbound(text) {
      seq += 1;
      const body = JSON.stringify({ id: `peer-${seq}`, conversation: `conv-${seq}`, thread: `t-${seq}`, text, sender: 'ann' });
      let attempt = 0;
      const post = async (): Promise<void> => {
        attempt += 1;
        const headers = signWebhook(peerSecret, `wh-${seq}-${attempt}`, Math.floor(Date.now() / 1000), body);
        const reply = await fetch(inboundUrl, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
        await reply.body?.cancel();
        if (reply.status !== 202) throw new Error(`the api node answered ${reply.status}`);
      };
      await post();
      return { conversation: `conv-${seq}`, thread: `t-${seq}`, text, resend: post };
    },
    received: () => peer.received.map((m) => ({ conversation: String(m.body['conversation']), thread: (m.body['thread'] as string | null) ?? null, text: String(m.body['text']) })),
    close: peer.close,
  };
});

function request(body: unknown, options: { at?: number; key?: string; id?: string } = {}) {
  const raw = Buffer.from(JSON.stringify(body));
  const headers = signWebhook(options.key ?? secret, options.id ?? 'wh-1', options.at ?? Math.floor(now.getTime() / 1000), raw);
  return { headers, rawBody: raw, now };
}

describe('webhook kind: check (the dry run)', () => {
  it('names the failing field', () => {
    const field = (config: Record<string, unknown>) => {
      try {
        webhookKind.check(config);
        return null;
      } catch (error) {
        return (error as ChannelConfigError).field;
      }
    };
    expect(field({ secret })).toBeNull();
    expect(field({ secret, url: 'https://x.example/hook', tolerance_secs: 60 })).toBeNull();
    expect(field({})).toBe('secret');
    expect(field({ secret: 'whsec_short' })).toBe('secret');
    expect(field({ secret, url: 'file:///etc/passwd' })).toBe('url');
    expect(field({ secret, tolerance_secs: 0 })).toBe('tolerance_secs');
  });
});

describe('webhook kind: inbound', () => {
  it('accepts a signed message, its id (or the webhook-id) as the peer message id', () => {
    const result = webhookKind.receiveHttp!({ secret }, request({ id: 'p-1', conversation: 'c', text: 'hi', sender: 's', thread: 't' }));
    expect(result.status).toBe(202);
    expect(result.messages).toEqual([{ peer_message_id: 'p-1', conversation: 'c', text: 'hi', sender: 's', thread: 't', received_at: now.toISOString(), meta: {} }]);
    expect(webhookKind.receiveHttp!({ secret }, request({ conversation: 'c', text: 'x' }, { id: 'wh-9' })).messages[0]!.peer_message_id).toBe('wh-9');
  });

  it('refuses forged, stale and malformed requests with nothing to deliver', () => {
    const forged = webhookKind.receiveHttp!({ secret }, request({ conversation: 'c', text: 'x' }, { key: newWebhookSecret() }));
    const stale = webhookKind.receiveHttp!({ secret, tolerance_secs: 60 }, request({ conversation: 'c', text: 'x' }, { at: Math.floor(now.getTime() / 1000) - 61 }));
    const malformed = webhookKind.receiveHttp!({ secret }, request({ conversation: '', text: 'x' }));
    const tampered = request({ conversation: 'c', text: 'x' });
    tampered.rawBody = Buffer.from(JSON.stringify({ conversation: 'c', text: 'y' }));
    expect([forged, stale, malformed, webhookKind.receiveHttp!({ secret }, tampered)].map((r) => [r.status, r.messages.length])).toEqual([
      [401, 0],
      [401, 0],
      [400, 0],
      [401, 0],
    ]);
  });
});

describe('webhook kind: outbound', () => {
  let receiver: WebhookPeer | undefined;
  afterEach(async () => receiver?.close());

  it('POSTs each reply signed to the url, and fails a send the peer refuses', async () => {
    receiver = await startWebhookPeer();
    const statuses: ChannelStatus[] = [];
    const connection = await webhookKind.open({
      channelId: 'web',
      config: { secret, url: receiver.url },
      deliver: async () => undefined,
      setStatus: (s) => statuses.push(s),
      fetch: guardedFetch(() => true),
      allowPrivateTargets: true,
      logger,
    });
    expect(statuses).toEqual(['Connected']);
    const reply = { channel_id: 'web', conversation: 'c', thread: 't', text: 'answer', in_reply_to: 'p-1', meta: { reply_id: 'web:p-1:reply' } };
    await connection.send(reply);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.body).toEqual({ channel_id: 'web', conversation: 'c', thread: 't', text: 'answer', in_reply_to: 'p-1' });
    expect(receiver.received[0]!.headers['webhook-id']).toBe('web:p-1:reply');
    expect(receiver.verified(receiver.received[0]!, secret)).toBe(true);
    receiver.setStatus(500);
    await expect(connection.send(reply)).rejects.toThrow('500');
    await connection.close();
  });

  it('refuses a private url while private targets are not allowed (D9), sending nothing', async () => {
    receiver = await startWebhookPeer();
    const connection = await webhookKind.open({
      channelId: 'web',
      config: { secret, url: receiver.url },
      deliver: async () => undefined,
      setStatus: () => undefined,
      fetch: guardedFetch(() => false),
      allowPrivateTargets: false,
      logger,
    });
    await expect(connection.send({ channel_id: 'web', conversation: 'c', thread: null, text: 'x', in_reply_to: null, meta: {} })).rejects.toThrow();
    expect(receiver.received).toEqual([]);
  });
});
