import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '@agent-platform/net';
import { createLogger } from '@agent-platform/observability';
import { waitUntil } from '@agent-platform/testkit';
import type { ChannelContext, ChannelStatus, InboundMessage } from '../channel-kind.ts';
import { channelKindConformance, startTelegramPeer, type TelegramPeer } from '../testing/index.ts';
import { telegramKind } from './telegram-kind.ts';

channelKindConformance(telegramKind, async () => {
  const peer = await startTelegramPeer();
  const config = { bot_token: peer.botToken, api_base_url: peer.apiBaseUrl, poll_timeout_secs: 5 };
  let seq = 0;
  return {
    goodConfig: config,
    badCredentialsConfig: { ...config, bot_token: '999:revoked' },
    badCredentialsError: /Telegram refused the bot token/,
    badConfigs: [
      { why: 'no bot token', config: { api_base_url: peer.apiBaseUrl }, field: 'bot_token' },
      { why: 'base URL not a URL', config: { ...config, api_base_url: '::' }, field: 'api_base_url' },
      {
        why: 'poll timeout too long',
        config: { ...config, poll_timeout_secs: 3600 },
        field: 'poll_timeout_secs',
      },
      {
        why: 'poll timeout not an integer',
        config: { ...config, poll_timeout_secs: 1.5 },
        field: 'poll_timeout_secs',
      },
    ],
    async sendInbound(text) {
      seq += 1;
      const chatId = 1000 + seq;
      const update = peer.injectMessage({ chat_id: chatId, text });
      return { conversation: String(chatId), text, thread: null, resend: async () => peer.redeliver(update) };
    },
    received: () =>
      peer.sent.map((m) => ({
        conversation: m.chat_id,
        thread: m.message_thread_id === null ? null : String(m.message_thread_id),
        text: m.text,
      })),
    close: peer.close,
  };
});

describe('telegram polling', () => {
  let peer: TelegramPeer;
  beforeAll(async () => {
    peer = await startTelegramPeer();
  });
  afterAll(() => peer.close());

  function context(failures: number): {
    context: ChannelContext;
    delivered: InboundMessage[];
    statuses: ChannelStatus[];
  } {
    const delivered: InboundMessage[] = [];
    const statuses: ChannelStatus[] = [];
    let left = failures;
    return {
      delivered,
      statuses,
      context: {
        channelId: 'tg-1',
        config: { bot_token: peer.botToken, api_base_url: peer.apiBaseUrl, poll_timeout_secs: 5 },
        async deliver(message) {
          if (left > 0) {
            left -= 1;
            throw new Error('bus down');
          }
          delivered.push(message);
        },
        setStatus: (s) => statuses.push(s),
        fetch: guardedFetch(() => true),
        allowPrivateTargets: true,
        logger: createLogger({ level: 'silent', bufferLines: 1, destination: 'silent' }).logger,
      },
    };
  }

  it('confirms an update only after deliver resolved: a failed delivery is fetched again', async () => {
    const run = context(1);
    const connection = await telegramKind.open(run.context);
    try {
      const update = peer.injectMessage({
        chat_id: 7,
        text: 'first try fails',
        from: { id: 5, username: 'bob' },
        message_thread_id: 33,
      });
      await waitUntil(() => run.delivered.length === 1, {
        timeoutMs: 5_000,
        message: 'the retried delivery',
      });
      expect(run.delivered[0]).toMatchObject({
        peer_message_id: String(update.update_id),
        conversation: '7',
        thread: '33',
        sender: 'bob',
      });
      await waitUntil(() => peer.confirmed().includes(update.update_id), {
        message: 'the update to be confirmed',
      });

      await connection.send({
        channel_id: 'tg-1',
        conversation: '7',
        thread: '33',
        text: 'reply',
        in_reply_to: String(update.update_id),
        meta: run.delivered[0]!.meta,
      });
      expect(peer.sent.at(-1)).toEqual({
        chat_id: '7',
        text: 'reply',
        message_thread_id: 33,
        reply_to_message_id: update.message.message_id,
      });
    } finally {
      await connection.close();
    }
  });

  it('close ends a long poll that is waiting, promptly', async () => {
    const run = context(0);
    const connection = await telegramKind.open(run.context);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await connection.close();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
