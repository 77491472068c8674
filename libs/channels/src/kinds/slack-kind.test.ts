import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '@agent-platform/net';
import { createLogger } from '@agent-platform/observability';
import type { ChannelStatus } from '../channel-kind.ts';
import {
  channelKindConformance,
  signSlackRequest,
  slackMessageEvent,
  startSlackPeer,
  type SlackPeer,
} from '../testing/index.ts';
import { slackKind } from './slack-kind.ts';

channelKindConformance(slackKind, async ({ inboundUrl }) => {
  const peer = await startSlackPeer();
  const config = {
    bot_token: peer.botToken,
    signing_secret: peer.signingSecret,
    api_base_url: peer.apiBaseUrl,
  };
  let seq = 0;
  return {
    goodConfig: config,
    badCredentialsConfig: { ...config, bot_token: 'xoxb-revoked' },
    badCredentialsError: /invalid_auth: Slack refused the bot token/,
    badConfigs: [
      { why: 'no bot token', config: { ...config, bot_token: undefined }, field: 'bot_token' },
      { why: 'empty signing secret', config: { ...config, signing_secret: '' }, field: 'signing_secret' },
      { why: 'base URL not a URL', config: { ...config, api_base_url: 'not a url' }, field: 'api_base_url' },
      {
        why: 'base URL not http',
        config: { ...config, api_base_url: 'ftp://slack.example/api' },
        field: 'api_base_url',
      },
      { why: 'token not a string', config: { ...config, bot_token: 42 }, field: 'bot_token' },
    ],
    async sendInbound(text) {
      seq += 1;
      const payload = slackMessageEvent({ channel: `C0${seq}`, text });
      const post = async (): Promise<void> => {
        const reply = await peer.postEvent(inboundUrl, payload);
        if (reply.status !== 200) throw new Error(`the api node answered ${reply.status}`);
      };
      await post();
      const event = payload.event as { ts: string };
      return { conversation: `C0${seq}`, text, thread: event.ts, resend: post };
    },
    received: () => peer.posts.map((p) => ({ conversation: p.channel, thread: p.thread_ts, text: p.text })),
    close: peer.close,
  };
});

describe('slack Events API requests (receiveHttp)', () => {
  let peer: SlackPeer;
  let config: Record<string, unknown>;
  beforeAll(async () => {
    peer = await startSlackPeer();
    config = { bot_token: peer.botToken, signing_secret: peer.signingSecret, api_base_url: peer.apiBaseUrl };
  });
  afterAll(() => peer.close());

  const receive = (payload: unknown, options: { secret?: string; timestamp?: number; now?: Date } = {}) => {
    const raw = JSON.stringify(payload);
    const headers = signSlackRequest(options.secret ?? peer.signingSecret, raw, options.timestamp);
    return slackKind.receiveHttp!(config, {
      headers,
      rawBody: Buffer.from(raw),
      now: options.now ?? new Date(),
    });
  };

  it('answers url_verification with the challenge', () => {
    const result = receive({ type: 'url_verification', challenge: 'c-123', token: 't' });
    expect(result).toEqual({ status: 200, body: { challenge: 'c-123' }, messages: [] });
  });

  it('maps a thread reply: thread = thread_ts, peer id = event_id, sender = user', () => {
    const payload = slackMessageEvent({
      channel: 'C1',
      text: 'in a thread',
      user: 'U9',
      ts: '1700000001.000200',
      thread_ts: '1700000000.000100',
      event_id: 'Ev1',
    });
    const result = receive(payload);
    expect(result.status).toBe(200);
    expect(result.messages).toEqual([
      {
        peer_message_id: 'Ev1',
        conversation: 'C1',
        thread: '1700000000.000100',
        sender: 'U9',
        text: 'in a thread',
        meta: { ts: '1700000001.000200' },
      },
    ]);
  });

  it('refuses a forged signature with 401 and delivers nothing', () => {
    const result = receive(slackMessageEvent({ channel: 'C1', text: 'forged' }), {
      secret: 'not-the-secret',
    });
    expect(result.status).toBe(401);
    expect(result.messages).toEqual([]);
  });

  it('refuses a body changed after signing', () => {
    const raw = JSON.stringify(slackMessageEvent({ channel: 'C1', text: 'original' }));
    const headers = signSlackRequest(peer.signingSecret, raw);
    const tampered = Buffer.from(raw.replace('original', 'tampered'));
    const result = slackKind.receiveHttp!(config, { headers, rawBody: tampered, now: new Date() });
    expect(result.status).toBe(401);
    expect(result.messages).toEqual([]);
  });

  it('refuses a replayed request (timestamp older than five minutes), even correctly signed', () => {
    const old = Math.floor(Date.now() / 1000) - 301;
    const result = receive(slackMessageEvent({ channel: 'C1', text: 'replayed' }), { timestamp: old });
    expect(result.status).toBe(401);
    expect(result.messages).toEqual([]);
    const fresh = receive(slackMessageEvent({ channel: 'C1', text: 'fresh' }), {
      timestamp: Math.floor(Date.now() / 1000) - 299,
    });
    expect(fresh.status).toBe(200);
  });

  it('refuses a request with no signature headers', () => {
    const raw = Buffer.from(JSON.stringify(slackMessageEvent({ channel: 'C1', text: 'x' })));
    expect(slackKind.receiveHttp!(config, { headers: {}, rawBody: raw, now: new Date() }).status).toBe(401);
  });

  it('ignores bot messages and subtypes, so the bot never answers itself', () => {
    const bot = slackMessageEvent({ channel: 'C1', text: 'from a bot' });
    (bot.event as Record<string, unknown>).bot_id = 'B1';
    const edited = slackMessageEvent({ channel: 'C1', text: 'edited' });
    (edited.event as Record<string, unknown>).subtype = 'message_changed';
    for (const payload of [bot, edited]) {
      const result = receive(payload);
      expect(result.status).toBe(200);
      expect(result.messages).toEqual([]);
    }
  });

  it('open refuses a private api_base_url unless private targets are allowed (D9)', async () => {
    const statuses: ChannelStatus[] = [];
    const connection = await slackKind.open({
      channelId: 'slack-d9',
      config,
      deliver: async () => undefined,
      setStatus: (s) => statuses.push(s),
      fetch: guardedFetch(() => false),
      allowPrivateTargets: false,
      logger: createLogger({ level: 'silent', bufferLines: 1, destination: 'silent' }).logger,
    });
    await connection.close();
    expect(statuses).toHaveLength(1);
    expect((statuses[0] as { Error: string }).Error).toMatch(/allow_private_targets/);
  });
});
