import { Streams, type ChannelInbound, type Envelope } from '@agent-platform/contracts';
import { agentFixture } from '@agent-platform/domain/testing';
import { newWebhookSecret, signWebhook } from '@agent-platform/net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Spec §Channels over HTTP (docs/channels.md), api alone: no bridge runs here, so an enabled
// channel is `NotConfigured`; the adapters and routing are tested in apps/platform and tests/e2e.
const BULLETS = '\u2022'.repeat(8);
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let api: TestApi;
let token: string;
let viewer: string;
let agent: string;
let secret: string;
let inbound: Array<Envelope<ChannelInbound>>;

// One api for the file (each test uses its own channel ids), so the file stays fast.
beforeAll(async () => {
  api = await startTestApi({ listen: false, config: { auth: { mode: 'local' } } });
  token = await api.issueKey('operator');
  viewer = await api.issueKey('viewer');
  agent = (await api.deps.agents.insert(agentFixture())).id;
  await api.deps.bus.consume<ChannelInbound>(Streams.channelInbound, { durable: 'test', maxDeliver: 1, backoffMs: [0] }, async (e) => {
    inbound.push(e);
  });
});
afterAll(async () => api.close());
beforeEach(async () => {
  for (const id of await listIds()) await call('DELETE', `/channels/${id}`);
  secret = newWebhookSecret();
  inbound = [];
});

const call = (method: string, path: string, body?: unknown, as = token) => api.request(method, path, { token: as, ...(body === undefined ? {} : { body }) });
const create = (id: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/channels', { id, kind: 'webhook', config: { secret, url: 'https://example.com/hook' }, default_agent: agent, ...extra });
const listIds = async () => ((await call('GET', '/channels')).body.channels as Array<{ id: string }>).map((c) => c.id);

function signed(body: unknown, options: { secret?: string; id?: string; at?: number } = {}) {
  const text = JSON.stringify(body);
  const headers = signWebhook(options.secret ?? secret, options.id ?? `msg_${Math.random()}`, options.at ?? Math.floor(Date.now() / 1000), text);
  return { body: text, headers: { ...headers, 'content-type': 'application/json' } };
}

describe('channel records', () => {
  it('lists the kinds, creates, reads and lists with the secret as the placeholder, status NotConfigured without a bridge', async () => {
    expect((await call('GET', '/channels/kinds', undefined, viewer)).body.kinds).toContain('webhook');
    const created = await create('web-a');
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 'web-a',
      kind: 'webhook',
      status: 'NotConfigured',
      enabled: true,
      default_agent: agent,
      default_workflow: null,
      config: { secret: BULLETS, url: 'https://example.com/hook' },
    });
    expect((await call('GET', '/channels/web-a', undefined, viewer)).body).toEqual(created.body);
    expect((await call('GET', '/settings/channels/web-a', undefined, viewer)).body).toEqual(created.body);
    expect(await listIds()).toEqual(['web-a']);
    // Stored sealed, never in any response or log line.
    const stored = await api.deps.store.collection<{ id: string; config: Record<string, unknown> }>('channels').get('web-a');
    expect(JSON.stringify(stored)).not.toContain(secret.slice(6));
    expect(api.logs().join('\n')).not.toContain(secret.slice(6));
  });

  it('refuses a duplicate id (409), an unknown kind (400, with the kinds and a suggestion), a config failing the dry run (400 naming the field) and a bad id (400), changing nothing', async () => {
    await create('web-a');
    const dup = await create('web-a', { default_agent: null });
    expect(dup.status).toBe(409);
    expect(dup.body.error.category).toBe('Conflict');
    const unknown = await call('POST', '/channels', { id: 'x', kind: 'webhok', config: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('did you mean "webhook"');
    expect(unknown.body.error.message).toContain('kinds: ');
    const dry = await call('POST', '/channels', { id: 'x', kind: 'webhook', config: { secret, url: 'ftp://nope' } });
    expect(dry.status).toBe(400);
    expect(dry.body.error.message).toContain('config.url');
    const noSecret = await call('POST', '/channels', { id: 'x', kind: 'webhook', config: {} });
    expect(noSecret.body.error.message).toContain('config.secret');
    for (const id of ['Upper', 'has space', 'a.b', '-lead', 'x'.repeat(65)]) expect((await call('POST', '/channels', { id, kind: 'webhook', config: { secret } })).status).toBe(400);
    expect((await call('POST', '/channels', { id: 'x', kind: 'webhook', config: { secret }, default_agent: 'not-a-uuid' })).status).toBe(400);
    expect((await call('POST', '/channels', { id: 'x', kind: 'webhook', config: { secret }, default_agent: UNKNOWN })).status).toBe(404);
    expect((await call('POST', '/channels', { id: 'x', kind: 'webhook', config: { secret }, default_workflow: 'no-such' })).status).toBe(404);
    expect((await call('POST', '/channels', { id: 'x', kind: 'webhook', config: { secret: BULLETS } })).status).toBe(400);
    expect(await listIds()).toEqual(['web-a']);
    expect((await call('POST', '/channels', { id: 'y', kind: 'webhook', config: { secret } }, viewer)).status).toBe(403);
  });

  it('PUT: kind is immutable, the placeholder keeps the stored secret, another value replaces it, a failing config changes nothing', async () => {
    await create('web-a');
    const record = async () => (await api.deps.store.collection<{ id: string; kind: string; config: Record<string, unknown> }>('channels').get('web-a'))!.doc;
    const opened = async () => api.deps.channels.openConfig((await record()) as never);
    const kindChange = await call('PUT', '/channels/web-a', { kind: 'slack', config: { secret: BULLETS } });
    expect(kindChange.status).toBe(400);
    expect(kindChange.body.error.message).toContain('cannot change');

    // The placeholder keeps the secret while the url stays (a new url needs the secret sent again: channel-config-routes.test.ts).
    const kept = await call('PUT', '/channels/web-a', { kind: 'webhook', config: { secret: BULLETS, url: 'https://example.com/hook', tolerance_secs: 60 }, default_agent: agent });
    expect(kept.status).toBe(200);
    expect(kept.body.config).toEqual({ secret: BULLETS, url: 'https://example.com/hook', tolerance_secs: 60 });
    expect((await opened())['secret']).toBe(secret);

    const before = await record();
    expect((await call('PUT', '/channels/web-a', { config: { secret, url: 'gopher://x' } })).status).toBe(400);
    expect((await call('PUT', '/channels/web-a', { config: { secret: BULLETS, url: 'https://example.com/hook' }, default_agent: UNKNOWN })).status).toBe(404);
    expect(await record()).toEqual(before);

    const next = newWebhookSecret();
    const replaced = await call('PUT', '/settings/channels/web-a', { config: { secret: next } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ config: { secret: BULLETS }, default_agent: null });
    expect((await opened())['secret']).toBe(next);
    expect(JSON.stringify(replaced.body) + api.logs().join('\n')).not.toContain(next.slice(6));
    expect((await call('PUT', '/channels/nope', { config: { secret } })).status).toBe(404);
  });

  it('enable, disable (both surfaces), delete', async () => {
    await create('web-a');
    expect((await call('POST', '/channels/web-a/disable')).body).toEqual({ status: 'disabled', channel: 'web-a' });
    expect((await call('GET', '/channels/web-a')).body).toMatchObject({ enabled: false, status: 'Disabled' });
    expect((await call('POST', '/settings/channels/web-a/enable')).body).toEqual({ status: 'enabled', channel: 'web-a' });
    expect((await call('PUT', '/settings/channels/web-a/enable', { enabled: false })).body).toEqual({ status: 'disabled', channel: 'web-a' });
    expect((await call('GET', '/channels/web-a')).body.enabled).toBe(false);
    expect((await call('POST', '/channels/nope/enable')).status).toBe(404);
    expect((await call('DELETE', '/settings/channels/web-a')).status).toBe(204);
    expect((await call('GET', '/channels/web-a')).status).toBe(404);
    expect((await call('DELETE', '/channels/web-a')).status).toBe(404);
  });
});

describe('POST /channels/{id}/inbound', () => {
  it('takes a signed message without an api key and delivers it once per peer id, on the channel id', async () => {
    await create('web-a');
    const message = { id: 'm-1', conversation: 'c-1', text: 'hello', sender: 'ann' };
    const first = await api.request('POST', '/channels/web-a/inbound', signed(message, { id: 'w-1' }));
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ status: 'accepted', id: 'm-1' });
    // The same peer message again (a peer retry with a new webhook-id): one bus message.
    expect((await api.request('POST', '/channels/web-a/inbound', signed(message, { id: 'w-2' }))).status).toBe(202);
    await expect.poll(() => inbound.length).toBe(1);
    expect(inbound[0]).toMatchObject({ id: 'web-a:m-1', data: { channel_id: 'web-a', kind: 'webhook', conversation: 'c-1', text: 'hello', sender: 'ann', thread: null } });
  });

  it('refuses a forged signature, a replayed (old) timestamp, a malformed body, a disabled or unknown channel, delivering nothing', async () => {
    await create('web-a');
    const message = { conversation: 'c', text: 'x' };
    const forged = await api.request('POST', '/channels/web-a/inbound', signed(message, { secret: newWebhookSecret() }));
    expect(forged.status).toBe(401);
    const replayed = await api.request('POST', '/channels/web-a/inbound', signed(message, { at: Math.floor(Date.now() / 1000) - 3600 }));
    expect(replayed.status).toBe(401);
    expect(JSON.stringify(replayed.body)).toContain('replayed');
    const unsigned = await api.request('POST', '/channels/web-a/inbound', { body: JSON.stringify(message), headers: { 'content-type': 'application/json' } });
    expect(unsigned.status).toBe(401);
    expect((await api.request('POST', '/channels/web-a/inbound', signed({ text: 'no conversation' }))).status).toBe(400);
    // Any content type reaches the kind (the signature covers the raw bytes): no 415 here.
    const form = await api.request('POST', '/channels/web-a/inbound', { body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(401);
    expect((await api.request('POST', '/channels/nope/inbound', signed(message))).status).toBe(404);
    await call('POST', '/channels/web-a/disable');
    const disabled = await api.request('POST', '/channels/web-a/inbound', signed(message));
    expect(disabled.status).toBe(409);
    expect(inbound).toEqual([]);
  });

  it('writes no audit entry, whoever calls it: 20 forged requests (and an accepted one) leave the audit log as it was', async () => {
    await create('web-a');
    const entries = async (): Promise<number> => (await call('GET', '/security/status')).body.audit_entries as number;
    const before = await entries();
    expect(before).toBeGreaterThan(0);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.request('POST', '/channels/web-a/inbound', signed({ conversation: 'c', text: `forged ${i}` }, { secret: newWebhookSecret() }))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(401));
    expect((await api.request('POST', '/channels/nope/inbound', signed({ conversation: 'c', text: 'x' }))).status).toBe(404);
    expect((await api.request('POST', '/channels/web-a/inbound', signed({ id: 'ok-1', conversation: 'c', text: 'fine' }))).status).toBe(202);
    expect(await entries()).toBe(before);
    // Managing channels is still audited.
    await call('POST', '/channels/web-a/disable');
    expect(await entries()).toBe(before + 1);
  });
});
