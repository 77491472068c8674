import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postSlackEvent, sendMail, startSlackPeer, startSmtpPeer, type SlackPeer, type SmtpPeer } from '@agent-platform/channels/testing';
import { freePort, startWebhookReceiver, waitUntil, type WebhookReceiver } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLicence } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';

// README "Channels, webhooks and triggers", as a new user does it: two agents from examples/, a
// `slack` channel bound to the first and an `email` channel bound to the second, one conversation
// through each (a signed Slack event in, the threaded reply out through the Web API; a mail into
// the channel's SMTP listener, the `Re:` reply out through the mail server), both transcripts, a
// webhook whose signed delivery of `invocation.completed` verifies under the secret shown once.
// Local peers stand in for Slack, the mail server and the webhook receiver; the request bodies
// are the README's (only hosts, ports and secrets differ).
const CLAIMS_INTAKE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
const POLICY_SERVICING = fileURLToPath(new URL('../../examples/policy-servicing', import.meta.url));

// The README's Slack event body and its mail, verbatim.
const SLACK_BODY = {
  type: 'event_callback',
  event_id: 'Ev0001',
  event: { type: 'message', channel: 'C0CLAIMS', user: 'U123', text: 'Hail damage on my car, policy AU-5678', ts: '1764075600.000100' },
};
const MAIL = {
  from: 'alice@example.com',
  to: 'policy-bot@example.com',
  subject: 'Change of address',
  message_id: '<change-of-address-1@example.com>',
  text: 'I moved to 12 High Street, please update policy HO-1234.',
};

// docs/webhooks.md's verification snippet, as a receiver would run it.
function verify(secret: string, headers: Record<string, string | string[] | undefined>, rawBody: string): boolean {
  const id = String(headers['webhook-id']), ts = String(headers['webhook-timestamp']);
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${rawBody}`).digest();
  return String(headers['webhook-signature']).split(' ').some((entry) => {
    const given = Buffer.from(entry.split(',')[1] ?? '', 'base64');
    return entry.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

let dir: string | undefined;
let platform: PlatformProcess | undefined;
let slack: SlackPeer | undefined;
let smtp: SmtpPeer | undefined;
let receiver: WebhookReceiver | undefined;

afterAll(async () => {
  platform?.kill();
  await Promise.all([slack?.close(), smtp?.close(), receiver?.close()]);
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('README channels, webhooks and triggers against the all-in-one platform', () => {
  it('a Slack channel and an email channel to two agents, both conversations and transcripts, a signed webhook delivery', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-channels-tour-'));
    [slack, smtp, receiver] = await Promise.all([startSlackPeer(), startSmtpPeer(), startWebhookReceiver()]);
    const listenPort = await freePort();
    const configPath = join(dir, 'agent-platform.toml');
    const config = {
      server: { listen: `127.0.0.1:${await freePort()}` },
      storage: { data_dir: join(dir, 'data') },
      auth: { mode: 'local' },
      network: { allow_private_targets: true },
      licence: await writeLicence(dir, {}),
    };
    await writeFile(configPath, stringify(config));
    platform = startPlatform(dir, ['--config', configPath]);
    const B = await platform.listening();
    const token: string = (await call(B, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;

    // Two agents.
    const one = await call(B, 'POST', '/catalog/install', { token, body: { path: CLAIMS_INTAKE, activate: true } });
    expect(one.status, JSON.stringify(one.body)).toBe(201);
    const AGENT1: string = one.body.installed.at(-1).id;
    const two = await call(B, 'POST', '/catalog/install', { token, body: { path: POLICY_SERVICING, activate: true } });
    expect(two.status, JSON.stringify(two.body)).toBe(201);
    expect(two.body.installed.at(-1)).toMatchObject({ type: 'agent-template', name: 'policy-servicing' });
    const AGENT2: string = two.body.installed.at(-1).id;

    // A slack channel for agent one, an email channel for agent two.
    const slackChannel = await call(B, 'POST', '/channels', {
      token,
      body: {
        id: 'slack-claims',
        kind: 'slack',
        default_agent: AGENT1,
        config: { bot_token: slack.botToken, signing_secret: slack.signingSecret, api_base_url: slack.apiBaseUrl },
      },
    });
    expect(slackChannel.status, JSON.stringify(slackChannel.body)).toBe(201);
    expect(slackChannel.body.config).toMatchObject({ bot_token: '••••••••', signing_secret: '••••••••' });
    const emailChannel = await call(B, 'POST', '/channels', {
      token,
      body: {
        id: 'email-policy',
        kind: 'email',
        default_agent: AGENT2,
        config: {
          smtp_host: smtp.host,
          smtp_port: smtp.port,
          username: smtp.username,
          password: smtp.password,
          from: 'policy-bot@example.com',
          listen_host: '127.0.0.1',
          listen_port: listenPort,
          allowed_recipients: ['policy-bot@example.com'],
        },
      },
    });
    expect(emailChannel.status, JSON.stringify(emailChannel.body)).toBe(201);
    expect(emailChannel.body.config.password).toBe('••••••••');
    await waitUntil(async () => {
      const { body } = await call(B, 'GET', '/channels', { token });
      return body.channels.every((c: { status: unknown }) => c.status === 'Connected');
    }, { timeoutMs: 10_000 });
    expect((await call(B, 'GET', '/channels/slack-claims', { token })).body).toMatchObject({ kind: 'slack', status: 'Connected', default_agent: AGENT1 });

    // Slack: a signed message event in; the reply in the message's thread, through the Web API.
    const inbound = await postSlackEvent(`${B}/channels/slack-claims/inbound`, SLACK_BODY, { signingSecret: slack.signingSecret });
    expect(inbound).toEqual({ status: 200, body: { ok: true } });
    await waitUntil(() => slack!.posts.length > 0, { timeoutMs: 10_000 });
    // The `local` model echoes the message.
    expect(slack.posts).toEqual([{ channel: 'C0CLAIMS', thread_ts: '1764075600.000100', text: 'Hail damage on my car, policy AU-5678' }]);

    // Slack's retry of the same event is answered once (checked at the end); a forged one is refused.
    expect((await postSlackEvent(`${B}/channels/slack-claims/inbound`, SLACK_BODY, { signingSecret: slack.signingSecret })).status).toBe(200);
    expect((await postSlackEvent(`${B}/channels/slack-claims/inbound`, { ...SLACK_BODY, event_id: 'Ev0002' }, { signingSecret: 'not-the-secret' })).status).toBe(401);

    // Email: a mail to the channel's listener; the `Re:` reply through the mail server.
    await sendMail({ port: listenPort, ...MAIL });
    await waitUntil(() => smtp!.messages.length > 0, { timeoutMs: 10_000 });
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]).toMatchObject({
      to: ['alice@example.com'],
      subject: 'Re: Change of address',
      in_reply_to: '<change-of-address-1@example.com>',
      text: MAIL.text,
    });
    expect(smtp.messages[0]!.headers['from']).toContain('policy-bot@example.com');
    // Each channel carried only its own conversation.
    expect(slack.posts).toHaveLength(1);

    // Both transcripts, each under its own agent only.
    const t1 = await call(B, 'GET', `/agents/${AGENT1}/transcripts`, { token });
    expect(t1.body.transcripts.map((t: { channel_id: string; conversation: string }) => [t.channel_id, t.conversation])).toEqual([['slack-claims', 'C0CLAIMS']]);
    const t2 = await call(B, 'GET', `/agents/${AGENT2}/transcripts`, { token });
    expect(t2.body.transcripts.map((t: { channel_id: string; conversation: string }) => [t.channel_id, t.conversation])).toEqual([['email-policy', 'alice@example.com']]);
    const slackTurns = await call(B, 'GET', `/agents/${AGENT1}/transcripts/slack-claims?conversation=C0CLAIMS`, { token });
    expect(slackTurns.body.turns.map((t: { role: string; content: string }) => [t.role, t.content])).toEqual([
      ['user', 'Hail damage on my car, policy AU-5678'],
      ['assistant', 'Hail damage on my car, policy AU-5678'],
    ]);
    const mailTurns = await call(B, 'GET', `/agents/${AGENT2}/transcripts/email-policy?conversation=alice@example.com`, { token });
    expect(mailTurns.body.turns.map((t: { role: string }) => t.role)).toEqual(['user', 'assistant']);
    expect(mailTurns.body.turns[0].content).toBe(MAIL.text);

    // A webhook for agent one; its secret is shown once.
    const hook = await call(B, 'POST', '/webhooks', { token, body: { agent_id: AGENT1, url: `${receiver.url}/hooks/claims` } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const secret: string = hook.body.secret;
    expect(secret).toMatch(/^whsec_/);
    expect((await call(B, 'GET', '/webhooks', { token })).text).not.toContain(secret);

    // The optional trigger: agent one's answers make agent two act.
    const trigger = await call(B, 'POST', `/agents/${AGENT2}/triggers`, {
      token,
      body: { pattern: { invocation_completed: { agent_id: AGENT1 } }, prompt_template: 'Claims intake answered: {{event}}' },
    });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);

    // A message to agent one: its invocation.completed arrives signed.
    const sent = await call(B, 'POST', `/agents/${AGENT1}/send`, { token, body: { message: 'Any news on AU-5678?' } });
    expect(sent.body.content).toBe('Any news on AU-5678?');
    const completed = () => receiver!.requests.find((r) => (JSON.parse(r.body) as { type: string }).type === 'invocation.completed');
    await waitUntil(() => completed() !== undefined, { timeoutMs: 10_000 });
    const delivery = completed()!;
    expect(delivery.path).toBe('/hooks/claims');
    expect(verify(secret, delivery.headers, delivery.body)).toBe(true);
    expect(verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), delivery.headers, delivery.body)).toBe(false);
    const body = JSON.parse(delivery.body);
    expect(body.data).toMatchObject({ kind: 'invocation.completed', agent_id: AGENT1, data: { source: 'Api', content: 'Any news on AU-5678?' } });
    // Only agent one's events reach its webhook.
    expect(receiver.requests.every((r) => (JSON.parse(r.body) as { data: { agent_id: string } }).data.agent_id === AGENT1)).toBe(true);

    const test = await call(B, 'POST', `/webhooks/${hook.body.id}/test`, { token });
    expect(test.body).toMatchObject({ delivered: true, status_code: 200 });
    const log = await call(B, 'GET', `/webhooks/${hook.body.id}/deliveries`, { token });
    expect(log.body.deliveries.map((d: { kind: string }) => d.kind)).toEqual(expect.arrayContaining(['invocation.completed', 'webhook.test']));
    expect(log.body.deliveries.every((d: { delivered: boolean }) => d.delivered)).toBe(true);

    await waitUntil(async () => (await call(B, 'GET', `/triggers/${trigger.body.id}/fires`, { token })).body.fires.some((f: { outcome: string }) => f.outcome === 'fired'), { timeoutMs: 10_000 });
    const fires = (await call(B, 'GET', `/triggers/${trigger.body.id}/fires`, { token })).body.fires;
    expect(fires.map((f: { event_kind: string; outcome: string }) => [f.event_kind, f.outcome])).toEqual([['invocation.completed', 'fired']]);

    // The retried Slack event got no second reply, and the transcript holds it once.
    expect(slack.posts).toHaveLength(1);
    expect((await call(B, 'GET', `/agents/${AGENT1}/transcripts`, { token })).body.transcripts[0].turns).toBe(2);

    // No secret in any log line.
    const output = platform.output();
    for (const s of [secret, slack.botToken, slack.signingSecret, smtp.password]) expect(output).not.toContain(s);
  });
});
