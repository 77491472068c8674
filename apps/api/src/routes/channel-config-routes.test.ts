import { signSlackRequest, slackMessageEvent } from '@agent-platform/channels/testing';
import { newWebhookSecret } from '@agent-platform/net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// What a channel's config may hold (docs/channels.md "Secrets", docs/channel-kinds.md): a stored
// secret never follows a changed destination, a field the kind does not know is refused rather
// than stored in clear, and a refused inbound request answers the spec's error envelope.
const BULLETS = '\u2022'.repeat(8);

let api: TestApi;
let token: string;
beforeAll(async () => {
  api = await startTestApi({ listen: false, config: { auth: { mode: 'local' } } });
  token = await api.issueKey('operator');
});
afterAll(async () => api.close());
beforeEach(async () => {
  for (const { id } of (await call('GET', '/channels')).body.channels as Array<{ id: string }>)
    await call('DELETE', `/channels/${id}`);
});

const call = (method: string, path: string, body?: unknown) =>
  api.request(method, path, { token, ...(body === undefined ? {} : { body }) });
const stored = async (id: string) =>
  (await api.deps.store.collection<{ id: string }>('channels').get(id))?.doc ?? null;
const opened = async (id: string) => api.deps.channels.openConfig((await stored(id)) as never);

/** One good config per kind, and each field that decides where the kind's secrets go, with another value. */
const KINDS: Array<{
  kind: string;
  config: Record<string, unknown>;
  moves: Array<Record<string, unknown>>;
  stays: Record<string, unknown>;
}> = [
  {
    kind: 'telegram',
    config: { bot_token: '123456:real-token', api_base_url: 'https://tg.example.com' },
    // Left out, the base URL is Telegram's own: a change of destination too.
    moves: [{ api_base_url: 'https://attacker.example.net' }, { api_base_url: undefined }],
    stays: { poll_timeout_secs: 10 },
  },
  {
    kind: 'slack',
    config: {
      bot_token: 'xoxb-real',
      signing_secret: 'real-signing',
      api_base_url: 'https://slack.example.com/api',
    },
    moves: [{ api_base_url: 'https://attacker.example.net/api' }],
    stays: {},
  },
  {
    kind: 'email',
    config: {
      smtp_host: 'smtp.example.com',
      smtp_port: 587,
      username: 'bot',
      password: 'real-password',
      from: 'bot@example.com',
    },
    moves: [{ smtp_host: 'smtp.attacker.example.net' }, { smtp_port: 2525 }],
    stays: { from: 'other-bot@example.com' },
  },
  {
    kind: 'mqtt',
    config: {
      url: 'mqtt://broker.example.com:1883',
      username: 'dev',
      password: 'real-password',
      inbound_topic: 'in/#',
      outbound_topic: 'out/{conversation}',
    },
    moves: [{ url: 'mqtt://attacker.example.net:1883' }],
    stays: { qos: 0 },
  },
  {
    kind: 'webhook',
    config: { secret: newWebhookSecret(), url: 'https://hooks.example.com/in' },
    moves: [{ url: 'https://attacker.example.net/in' }],
    stays: { tolerance_secs: 60 },
  },
];

const placeholders = (config: Record<string, unknown>, secrets: string[]) =>
  Object.fromEntries(Object.entries(config).map(([k, v]) => [k, secrets.includes(k) ? BULLETS : v]));
const SECRETS: Record<string, string[]> = {
  telegram: ['bot_token'],
  slack: ['bot_token', 'signing_secret'],
  email: ['password'],
  mqtt: ['password'],
  webhook: ['secret'],
};

describe('a stored secret never follows a changed destination', () => {
  for (const { kind, config, moves, stays } of KINDS) {
    it(`${kind}: the placeholder is refused (400 naming the secret) when a destination field changes, kept otherwise, and the secret itself is taken`, async () => {
      const id = `${kind}-dest`;
      expect((await call('POST', '/channels', { id, kind, config })).status).toBe(201);
      const before = await stored(id);
      const kept = placeholders(config, SECRETS[kind]!);
      for (const move of moves) {
        const moved = await call('PUT', `/channels/${id}`, { config: { ...kept, ...move } });
        expect(moved.status, JSON.stringify(move)).toBe(400);
        expect(moved.body.error.category).toBe('ValidationError');
        for (const secret of SECRETS[kind]!) expect(moved.body.error.message).toContain(secret);
        expect(moved.body.error.message).toContain(Object.keys(move)[0]);
        expect(await stored(id)).toEqual(before);
      }
      // No destination changed: the placeholder keeps the stored secret.
      const same = await call('PUT', `/channels/${id}`, { config: { ...kept, ...stays } });
      expect(same.status, JSON.stringify(same.body)).toBe(200);
      for (const secret of SECRETS[kind]!) expect((await opened(id))[secret]).toBe(config[secret]);
      // The secret sent again with the new destination: accepted.
      const resent = await call('PUT', `/channels/${id}`, { config: { ...config, ...moves[0] } });
      expect(resent.status, JSON.stringify(resent.body)).toBe(200);
      expect(JSON.stringify(resent.body)).not.toContain(String(config[SECRETS[kind]![0]!]));
    });
  }
});

describe('a config field the kind does not know is refused', () => {
  it('telegram `token` for `bot_token`: 400 naming the field and the closest known one, nothing stored, nothing echoed', async () => {
    const created = await call('POST', '/channels', {
      id: 'tg-typo',
      kind: 'telegram',
      config: { token: '123456:typo-secret' },
    });
    expect(created.status).toBe(400);
    expect(created.body.error.category).toBe('ValidationError');
    expect(created.body.error.message).toContain(
      'unknown field `token` in telegram config; did you mean `bot_token`?',
    );
    expect(created.body.error.details).toMatchObject({ field: 'config.token' });
    expect(JSON.stringify(created.body)).not.toContain('typo-secret');
    expect((await call('GET', '/channels/tg-typo')).status).toBe(404);
  });

  for (const { kind, config } of KINDS) {
    it(`${kind}: on POST and on PUT, changing nothing`, async () => {
      const refused = await call('POST', '/channels', {
        id: `${kind}-x`,
        kind,
        config: { ...config, colour: 'blue' },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toContain(`unknown field \`colour\` in ${kind} config`);
      expect((await call('GET', `/channels/${kind}-x`)).status).toBe(404);
      expect((await call('POST', '/channels', { id: `${kind}-x`, kind, config })).status).toBe(201);
      const before = await stored(`${kind}-x`);
      const put = await call('PUT', `/channels/${kind}-x`, { config: { ...config, colour: 'blue' } });
      expect(put.status).toBe(400);
      expect(put.body.error.message).toContain('`colour`');
      expect(await stored(`${kind}-x`)).toEqual(before);
    });
  }
});

describe('a refused slack inbound request', () => {
  it('answers the spec error envelope: 401 AuthError for a forged signature, 400 ValidationError for a body that is not JSON', async () => {
    const signingSecret = 'the-signing-secret';
    expect(
      (
        await call('POST', '/channels', {
          id: 'slack-in',
          kind: 'slack',
          config: { bot_token: 'xoxb-1', signing_secret: signingSecret },
        })
      ).status,
    ).toBe(201);
    const post = (raw: string, secret: string) =>
      api.request('POST', '/channels/slack-in/inbound', {
        body: raw,
        headers: { 'content-type': 'application/json', ...signSlackRequest(secret, raw) },
      });
    const forged = await post(
      JSON.stringify(slackMessageEvent({ channel: 'C1', text: 'x' })),
      'not-the-secret',
    );
    expect(forged.status).toBe(401);
    expect(forged.body).toEqual({
      error: { category: 'AuthError', message: expect.stringMatching(/signature/) },
    });
    const malformed = await post('not json', signingSecret);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({
      error: { category: 'ValidationError', message: expect.stringMatching(/JSON/) },
    });
  });
});
