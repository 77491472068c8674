import { randomUUID } from 'node:crypto';
import { createWebhookDeliveryService } from '@agent-platform/agent-worker';
import { startTestApi, type TestApi } from '@agent-platform/api/testing';
import { Streams, type PlatformEvent } from '@agent-platform/contracts';
import { WEBHOOKS_COLLECTION, type WebhookRecord } from '@agent-platform/domain';
import { agentFixture } from '@agent-platform/domain/testing';
import { guardedPoster, isPrivateAddress, verifyWebhook } from '@agent-platform/net';
import { startWebhookReceiver, waitUntil, type ReceivedRequest, type WebhookReceiver } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Outbound webhook deliveries in one process, as `npm start` composes them: platform events
// published on the bus become signed POSTs through the embedded queue, retried with backoff,
// dead-lettered after the last attempt, all visible in GET /webhooks/{id}/deliveries.
type Delivery = { attempt: number; delivered: boolean; status_code: number | null; error: string | null; dead_letter: boolean; message_id: string; event_id: string | null };

function eventFor(agentId: string | null, kind: PlatformEvent['kind'] = 'invocation.completed'): PlatformEvent {
  return { id: randomUUID(), kind, occurred_at: new Date().toISOString(), agent_id: agentId, data: { invocation_id: randomUUID(), tokens_used: 8 } };
}

async function publish(api: TestApi, event: PlatformEvent): Promise<void> {
  await api.deps.bus.publish(Streams.platformEvents, { id: event.id, correlation_id: event.id, attempt: 1, occurred_at: event.occurred_at, data: event });
}

async function deliveries(api: TestApi, id: string, query = ''): Promise<Delivery[]> {
  const res = await api.request('GET', `/webhooks/${id}/deliveries${query}`);
  expect(res.status).toBe(200);
  return res.body.deliveries as Delivery[];
}

const nowSecs = () => Math.floor(Date.now() / 1000);

describe('deliveries in the all-in-one', () => {
  let api: PlatformTestApi;
  let agent: string;
  beforeAll(async () => {
    api = await startPlatformTestApi({
      config: { network: { allow_private_targets: true }, webhooks: { max_attempts: 3, backoff_base_ms: 50 } },
    });
    agent = (await insertAgent(api)).id;
  });
  afterAll(async () => {
    await api.close();
  });

  async function register(receiver: WebhookReceiver, agentId = agent): Promise<{ id: string; secret: string }> {
    const res = await api.request('POST', '/webhooks', { body: { agent_id: agentId, url: `${receiver.url}/hook` } });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  }

  it('retries a failing receiver with backoff until it answers 2xx: 3 attempts, each validly signed, one webhook-id; only the agent\'s events', async () => {
    const receiver = await startWebhookReceiver((n) => (n <= 2 ? 500 : 200));
    const other = await startWebhookReceiver();
    try {
      const hook = await register(receiver);
      const otherAgent = (await insertAgent(api)).id;
      await register(other, otherAgent);
      const event = eventFor(agent);
      await publish(api, event);
      await publish(api, event); // a redelivered event: de-duplicated, still one delivery
      await publish(api, eventFor(null, 'licence.budget.warning')); // platform-wide: no agent, no webhook
      await waitUntil(async () => (await deliveries(api, hook.id)).some((d) => d.delivered), { timeoutMs: 10_000, message: 'the third attempt to succeed' });

      expect(receiver.requests).toHaveLength(3);
      const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      for (const request of receiver.requests) {
        expect(verifyWebhook(hook.secret, request.headers, request.body, nowSecs())).toMatchObject({ ok: true });
        expect(request.headers['content-type']).toBe('application/json');
        expect(JSON.parse(request.body)).toEqual({ type: 'invocation.completed', timestamp: event.occurred_at, data: event });
      }
      const log = await deliveries(api, hook.id);
      expect(log.map((d) => [d.attempt, d.delivered, d.status_code, d.dead_letter])).toEqual([
        [3, true, 200, false],
        [2, false, 500, false],
        [1, false, 500, false],
      ]);
      expect(log.every((d) => d.event_id === event.id && d.message_id === [...ids][0])).toBe(true);
      expect(other.requests).toEqual([]);
    } finally {
      await receiver.close();
      await other.close();
    }
  });

  it('dead-letters an event after the configured attempts when the receiver always fails', async () => {
    const receiver = await startWebhookReceiver(() => 503);
    try {
      const hook = await register(receiver);
      await publish(api, eventFor(agent, 'agent.suspended'));
      await waitUntil(async () => (await deliveries(api, hook.id, '?dead_letter=true')).length === 1, { timeoutMs: 10_000, message: 'the dead-letter record' });
      const log = await deliveries(api, hook.id);
      expect(log.map((d) => [d.attempt, d.status_code, d.dead_letter])).toEqual([
        [3, 503, true],
        [2, 503, false],
        [1, 503, false],
      ]);
      expect(log[0]?.error).toBe('the receiver answered 503, not 2xx');
      expect(receiver.requests).toHaveLength(3);
    } finally {
      await receiver.close();
    }
  });

  it('stops the pending deliveries of a deleted webhook', async () => {
    const receiver = await startWebhookReceiver(() => 500);
    try {
      const hook = await register(receiver);
      await publish(api, eventFor(agent));
      await waitUntil(() => receiver.requests.length >= 1, { timeoutMs: 10_000, message: 'the first attempt' });
      expect((await api.request('DELETE', `/webhooks/${hook.id}`)).status).toBe(204);
      const seen = receiver.requests.length;
      // The retries were due within 50 + 100 ms; give them four times that to (not) come.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(receiver.requests.length).toBe(seen);
      expect(seen).toBeLessThan(3);
    } finally {
      await receiver.close();
    }
  });

  it('does not deliver an event fanned out again after its delivery completed (the job id is free by then)', async () => {
    const receiver = await startWebhookReceiver(() => 200);
    try {
      const hook = await register(receiver);
      const event = eventFor(agent);
      await publish(api, event);
      await waitUntil(async () => (await deliveries(api, hook.id)).some((d) => d.delivered), { timeoutMs: 10_000, message: 'the delivery' });
      // The same event again, as the fan-out sees a bus redelivery (its ack lost, or a fan-out
      // that failed for another webhook retried): under another message id, so the bus passes it on.
      await api.deps.bus.publish(Streams.platformEvents, { id: randomUUID(), correlation_id: event.id, attempt: 2, occurred_at: event.occurred_at, data: event });
      // A later event is delivered once the repeat was fanned out (one consumer, in order).
      const marker = eventFor(agent);
      await publish(api, marker);
      await waitUntil(() => receiver.requests.some((r) => JSON.parse(r.body).data.id === marker.id), { timeoutMs: 10_000, message: 'the later event' });
      await waitUntil(async () => (await deliveries(api, hook.id)).length >= 2, { message: 'both deliveries logged' });
      expect(receiver.requests.map((r) => (JSON.parse(r.body) as { data: PlatformEvent }).data.id)).toEqual([event.id, marker.id]);
      expect((await deliveries(api, hook.id)).map((d) => d.event_id)).toEqual([marker.id, event.id]);
    } finally {
      await receiver.close();
    }
  });
});

describe('D9 at delivery time (allow_private_targets = false)', () => {
  let api: TestApi;
  let canary: WebhookReceiver;
  let redirector: WebhookReceiver;
  const requests = (): ReceivedRequest[] => canary.requests;
  beforeAll(async () => {
    canary = await startWebhookReceiver();
    // A peer at 127.0.0.2 plays a public address (the predicate below says so, for it alone),
    // answering every delivery with a redirect to the canary.
    redirector = await startWebhookReceiver(() => ({ status: 307, headers: { location: `${canary.url}/stolen` } }), '127.0.0.2');
    const isPrivate = (address: string) => address !== '127.0.0.2' && isPrivateAddress(address);
    const names: Record<string, string> = { 'canary.example.com': '127.0.0.1', 'public.example.com': '127.0.0.2' };
    const resolve = async (name: string) => [{ address: names[name] ?? '192.0.2.1' }];
    api = await startTestApi({
      listen: false,
      config: { webhooks: { max_attempts: 2, backoff_base_ms: 20, timeout_ms: 2_000 } },
      services: (deps) => [
        createWebhookDeliveryService({
          ...deps,
          secrets: deps.webhookSecrets,
          config: () => deps.config.current(),
          transport: guardedPoster(() => ({ allowPrivate: deps.config.current().network.allow_private_targets, timeoutMs: 2_000, maxResponseBytes: 1024, isPrivate, resolve })),
        }),
      ],
    });
  });
  afterAll(async () => {
    await api.close();
    await canary.close();
    await redirector.close();
  });

  it('sends nothing to a private target: literals stored before the switch, a name resolving to loopback, a redirect from a public peer', async () => {
    const agent = (await api.deps.agents.insert(agentFixture())).id;
    const p = canary.port;
    // Webhooks registered while private targets were allowed (the operator has since turned it off).
    const hooks: string[] = [];
    for (const url of [`http://127.0.0.1:${p}/`, `http://[::ffff:7f00:1]:${p}/`, `http://[::1]:${p}/`]) {
      const id = randomUUID();
      await api.deps.store.collection<WebhookRecord>(WEBHOOKS_COLLECTION).insert({
        id,
        agent_id: agent,
        url,
        created_at: new Date().toISOString(),
        secret_sealed: api.deps.webhookSecrets.seal(id, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
      });
      hooks.push(id);
    }
    // Names pass creation (only literals can be judged then) and are checked at every delivery.
    for (const url of [`http://canary.example.com:${p}/`, `http://public.example.com:${redirector.port}/hook`]) {
      const res = await api.request('POST', '/webhooks', { body: { agent_id: agent, url } });
      expect(res.status, url).toBe(201);
      hooks.push(res.body.id as string);
    }
    await publish(api, eventFor(agent));
    for (const id of hooks)
      await waitUntil(async () => (await deliveries(api, id, '?dead_letter=true')).length === 1, { timeoutMs: 10_000, message: `the dead letter of ${id}` });

    const errors = await Promise.all(hooks.map(async (id) => (await deliveries(api, id)).map((d) => d.error)));
    for (const [i, log] of errors.slice(0, 4).entries()) {
      expect(log, hooks[i]).toHaveLength(2);
      for (const error of log) expect(error).toMatch(/private address .*allow_private_targets/);
    }
    expect(errors[4]).toEqual([expect.stringMatching(/307: a redirect/), expect.stringMatching(/307: a redirect/)]);
    expect(redirector.requests).toHaveLength(2);
    expect(requests()).toEqual([]);
  });
});
