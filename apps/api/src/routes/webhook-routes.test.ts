import { verifyWebhook } from '@agent-platform/net';
import { agentFixture } from '@agent-platform/domain/testing';
import { WEBHOOKS_COLLECTION } from '@agent-platform/domain';
import { freePort, startWebhookReceiver, type WebhookReceiver } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Spec §Webhooks (outbound) over HTTP: every route, every refusal changing nothing, the secret
// shown once, and POST /webhooks/{id}/test against real local receivers. Deliveries of events
// (the queue, retries, dead letters) are tested where they run: apps/platform/src/webhooks.
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver((n) => (n === 3 ? 500 : 204));
});
afterAll(async () => {
  await receiver.close();
});

describe('with private targets allowed (a receiver on loopback)', () => {
  let api: TestApi;
  let token: string;
  let agent: string;
  // One api for the group: each test leaves no webhook behind but the last.
  beforeAll(async () => {
    api = await startTestApi({ listen: false, config: { auth: { mode: 'local' }, network: { allow_private_targets: true } } });
    token = await api.issueKey('operator');
    agent = (await api.deps.agents.insert(agentFixture())).id;
  });
  afterAll(async () => {
    await api.close();
  });
  const call = (method: string, path: string, body?: unknown, as = token) =>
    api.request(method, path, { token: as, ...(body === undefined ? {} : { body }) });
  const list = async () => (await call('GET', '/webhooks')).body.webhooks as unknown[];

  it('creates (201 {id, secret}), lists without the secret, deletes (204, then 404)', async () => {
    const created = await call('POST', '/webhooks', { agent_id: agent, url: `${receiver.url}/hooks?x=1` });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    const { id, secret } = created.body as { id: string; secret: string };
    const listed = await call('GET', '/webhooks');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      webhooks: [{ id, agent_id: agent, url: `${receiver.url}/hooks?x=1`, created_at: expect.stringMatching(/Z$/) }],
    });
    // The secret is shown once: not listed, not logged, not stored in clear.
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(6));
    expect(api.logs().join('\n')).not.toContain(secret.slice(6));
    const stored = await api.deps.store.collection<{ id: string }>(WEBHOOKS_COLLECTION).get(id);
    expect(JSON.stringify(stored)).not.toContain(secret.slice(6));

    expect((await call('DELETE', `/webhooks/${id}`)).status).toBe(204);
    expect(await list()).toEqual([]);
    const again = await call('DELETE', `/webhooks/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ category: 'NotFound', message: `webhook '${id}' not found` });
  });

  it('refuses bad input with the error envelope and changes nothing', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{ agent_id: 'not-a-uuid', url: receiver.url }, 400, /invalid agent id 'not-a-uuid'/],
      [{ agent_id: UNKNOWN, url: receiver.url }, 404, /agent '0{8}-.*' not found/],
      [{ agent_id: agent, url: 'hooks.example.com/x' }, 400, /not an absolute URL/],
      [{ agent_id: agent, url: 'ftp://hooks.example.com/x' }, 400, /http or https, not ftp/],
      [{ agent_id: agent }, 400, /url/],
      [{ agent_id: agent, url: receiver.url, extra: 1 }, 400, /extra/],
      [{ agent_id: agent, url: `https://e.com/${'x'.repeat(2100)}` }, 400, /url/],
    ];
    for (const [body, status, message] of cases) {
      const res = await call('POST', '/webhooks', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(res.body.error.message).toMatch(message);
      expect(res.body.error.category).toBe(status === 404 ? 'NotFound' : 'ValidationError');
    }
    expect((await call('DELETE', '/webhooks/nope')).body.error.message).toMatch(/invalid webhook id 'nope'/);
    expect((await call('POST', '/webhooks/nope/test')).status).toBe(400);
    expect((await call('POST', `/webhooks/${UNKNOWN}/test`)).status).toBe(404);
    expect((await call('GET', `/webhooks/${UNKNOWN}/deliveries`)).status).toBe(404);
    expect(await list()).toEqual([]);
  });

  it('lets a viewer read but not manage', async () => {
    const viewer = await api.issueKey('viewer');
    expect((await call('GET', '/webhooks', undefined, viewer)).status).toBe(200);
    expect((await call('POST', '/webhooks', { agent_id: agent, url: receiver.url }, viewer)).status).toBe(403);
    expect(await list()).toEqual([]);
  });

  it('POST /webhooks/{id}/test: delivered with status and latency, signed with the secret from creation; a non-2xx or a closed port is delivered: false', async () => {
    receiver.requests.length = 0;
    const { id, secret } = (await call('POST', '/webhooks', { agent_id: agent, url: `${receiver.url}/in` })).body as { id: string; secret: string };
    const ok = await call('POST', `/webhooks/${id}/test`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ delivered: true, status_code: 204, latency_ms: expect.any(Number) });
    expect(receiver.requests).toHaveLength(1);
    const [got] = receiver.requests;
    expect(got).toMatchObject({ method: 'POST', path: '/in' });
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toMatch(/^agent-platform-webhooks\//);
    expect(verifyWebhook(secret, got!.headers, got!.body, Math.floor(Date.now() / 1000))).toMatchObject({ ok: true });
    expect(JSON.parse(got!.body)).toEqual({
      type: 'webhook.test',
      timestamp: expect.stringMatching(/Z$/),
      data: { webhook_id: id, agent_id: agent, message: expect.any(String) },
    });

    await call('POST', `/webhooks/${id}/test`); // the receiver's 2nd answer: 204
    const refused = await call('POST', `/webhooks/${id}/test`); // 3rd: 500
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({ delivered: false, error: 'the receiver answered 500, not 2xx' });

    const closed = await freePort();
    const dead = (await call('POST', '/webhooks', { agent_id: agent, url: `http://127.0.0.1:${closed}/` })).body.id as string;
    const down = await call('POST', `/webhooks/${dead}/test`);
    expect(down.status).toBe(200);
    expect(down.body).toEqual({ delivered: false, error: expect.stringMatching(/ECONNREFUSED/) });

    const log = await call('GET', `/webhooks/${id}/deliveries?limit=2`);
    expect(log.status).toBe(200);
    expect(log.body.deliveries).toEqual([
      expect.objectContaining({ webhook_id: id, kind: 'webhook.test', event_id: null, delivered: false, status_code: 500, dead_letter: false }),
      expect.objectContaining({ webhook_id: id, kind: 'webhook.test', delivered: true, status_code: 204, error: null }),
    ]);
    expect((await call('GET', `/webhooks/${id}/deliveries?limit=0`)).status).toBe(400);
    expect((await call('GET', `/webhooks/${id}/deliveries?dead_letter=true`)).body).toEqual({ deliveries: [] });
    expect(api.logs().join('\n')).not.toContain(secret.slice(6));
  });
});

describe('with allow_private_targets = false (DECISIONS D9)', () => {
  let api: TestApi;
  let canary: WebhookReceiver;
  beforeAll(async () => {
    canary = await startWebhookReceiver();
    api = await startTestApi({ listen: false });
  });
  afterAll(async () => {
    await api.close();
    await canary.close();
  });

  it('refuses private IP literals, in every spelling, and localhost names at creation; nothing is stored or sent', async () => {
    const agent = (await api.deps.agents.insert(agentFixture())).id;
    const p = canary.port;
    for (const url of [
      `http://127.0.0.1:${p}/`,
      `http://localhost:${p}/`,
      `http://localhost.:${p}/`,
      `http://[::1]:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://2130706433:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://0x7f.0.0.1:${p}/`,
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
    ]) {
      const res = await api.request('POST', '/webhooks', { body: { agent_id: agent, url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toMatchObject({ category: 'ValidationError', message: expect.stringMatching(/allow_private_targets/) });
    }
    expect((await api.request('GET', '/webhooks')).body).toEqual({ webhooks: [] });
    expect(canary.requests).toEqual([]);
  });
});
