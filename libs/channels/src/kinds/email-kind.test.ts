import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '@agent-platform/net';
import { createLogger } from '@agent-platform/observability';
import { freePort, waitUntil } from '@agent-platform/testkit';
import type { ChannelConfig, ChannelContext, ChannelStatus, InboundMessage } from '../channel-kind.ts';
import { channelKindConformance, sendMail, startSmtpPeer, type SmtpPeer } from '../testing/index.ts';
import { emailKind } from './email-kind.ts';

channelKindConformance(emailKind, async () => {
  const peer = await startSmtpPeer();
  const listenPort = await freePort();
  const config = {
    smtp_host: peer.host,
    smtp_port: peer.port,
    username: peer.username,
    password: peer.password,
    from: 'bot@agent.test',
    listen_port: listenPort,
  };
  let seq = 0;
  return {
    goodConfig: config,
    badCredentialsConfig: { ...config, password: 'wrong-password' },
    badCredentialsError: /refused the credentials \(535\)/,
    badConfigs: [
      { why: 'no SMTP host', config: { ...config, smtp_host: '' }, field: 'smtp_host' },
      { why: 'port out of range', config: { ...config, smtp_port: 70_000 }, field: 'smtp_port' },
      { why: 'port missing', config: { ...config, smtp_port: undefined }, field: 'smtp_port' },
      { why: 'from not an address', config: { ...config, from: 'bot' }, field: 'from' },
      { why: 'listen port not a number', config: { ...config, listen_port: '25' }, field: 'listen_port' },
      { why: 'smtp_secure not a boolean', config: { ...config, smtp_secure: 'yes' }, field: 'smtp_secure' },
      {
        why: 'recipients not a list',
        config: { ...config, allowed_recipients: 'bot@agent.test' },
        field: 'allowed_recipients',
      },
      { why: 'password without username', config: { ...config, username: undefined }, field: 'username' },
    ],
    async sendInbound(text) {
      seq += 1;
      const from = `Customer${seq}@Customer.test`;
      const mail = { port: listenPort, from, to: 'bot@agent.test', subject: `Order ${seq}`, text };
      const messageId = await sendMail(mail);
      return {
        conversation: from.toLowerCase(),
        text,
        thread: messageId,
        resend: async () => void (await sendMail({ ...mail, message_id: messageId })),
      };
    },
    received: () =>
      peer.messages.map((m) => ({ conversation: m.to[0] ?? '', thread: m.in_reply_to, text: m.text })),
    close: peer.close,
  };
});

describe('email specifics', () => {
  let peer: SmtpPeer;
  beforeAll(async () => {
    peer = await startSmtpPeer();
  });
  afterAll(() => peer.close());

  async function opened(extra: ChannelConfig = {}, allowPrivateTargets = true) {
    const delivered: InboundMessage[] = [];
    const statuses: ChannelStatus[] = [];
    const listenPort = await freePort();
    const context: ChannelContext = {
      channelId: 'mail-1',
      config: {
        smtp_host: peer.host,
        smtp_port: peer.port,
        username: peer.username,
        password: peer.password,
        from: 'bot@agent.test',
        listen_port: listenPort,
        ...extra,
      },
      deliver: async (m) => void delivered.push(m),
      setStatus: (s) => statuses.push(s),
      fetch: guardedFetch(() => allowPrivateTargets),
      allowPrivateTargets,
      logger: createLogger({ level: 'silent', bufferLines: 1, destination: 'silent' }).logger,
    };
    const connection = await emailKind.open(context);
    return { connection, delivered, statuses, listenPort };
  }

  it('replies with Re: subject, In-Reply-To and References to the sender, marked as automatic', async () => {
    const { connection, delivered, listenPort } = await opened();
    try {
      const id = await sendMail({
        port: listenPort,
        from: 'ann@customer.test',
        to: 'bot@agent.test',
        subject: 'Where is my truck?',
        text: 'Truck 12?',
      });
      await waitUntil(() => delivered.length === 1);
      const inbound = delivered[0]!;
      expect(inbound).toMatchObject({
        peer_message_id: id,
        conversation: 'ann@customer.test',
        thread: id,
        sender: 'ann@customer.test',
        text: 'Truck 12?',
      });
      await connection.send({
        channel_id: 'mail-1',
        conversation: inbound.conversation,
        thread: inbound.thread,
        text: 'On its way.',
        in_reply_to: id,
        meta: inbound.meta,
      });
      const reply = peer.messages.at(-1)!;
      expect(reply).toMatchObject({
        to: ['ann@customer.test'],
        from: 'bot@agent.test',
        subject: 'Re: Where is my truck?',
        in_reply_to: id,
        references: [id],
        text: 'On its way.',
      });
      expect(reply.headers['auto-submitted']).toBe('auto-replied');
    } finally {
      await connection.close();
    }
  });

  it('does not deliver auto-replies (RFC 3834), so two bots cannot loop', async () => {
    const { connection, delivered, listenPort } = await opened();
    try {
      await sendMail({
        port: listenPort,
        from: 'away@customer.test',
        to: 'bot@agent.test',
        subject: 'Out of office',
        text: 'I am away',
        headers: { 'Auto-Submitted': 'auto-replied' },
      });
      await sendMail({
        port: listenPort,
        from: 'ann@customer.test',
        to: 'bot@agent.test',
        subject: 'Hi',
        text: 'a person',
      });
      await waitUntil(() => delivered.length === 1);
      expect(delivered.map((m) => m.text)).toEqual(['a person']);
    } finally {
      await connection.close();
    }
  });

  it('refuses recipients outside allowed_recipients with 550', async () => {
    const { connection, delivered, listenPort } = await opened({
      allowed_recipients: ['Support@Agent.test'],
    });
    try {
      await expect(
        sendMail({
          port: listenPort,
          from: 'ann@customer.test',
          to: 'other@agent.test',
          subject: 's',
          text: 'x',
        }),
      ).rejects.toThrow(/550/);
      await sendMail({
        port: listenPort,
        from: 'ann@customer.test',
        to: 'support@agent.test',
        subject: 's',
        text: 'allowed',
      });
      await waitUntil(() => delivered.length === 1);
      expect(delivered[0]?.text).toBe('allowed');
    } finally {
      await connection.close();
    }
  });

  it('refuses a private SMTP host unless private targets are allowed (D9)', async () => {
    const { connection, statuses } = await opened({}, false);
    await connection.close();
    expect(statuses).toHaveLength(1);
    expect((statuses[0] as { Error: string }).Error).toMatch(/allow_private_targets/);
  });
});
