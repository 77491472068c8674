import { verifyWebhook } from '@agent-platform/net';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidOwningPort } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';
import { publishAgentEvent, startWebhookFleet, type WebhookFleet } from '../support/webhook-fleet.ts';

// Webhook deliveries in a fleet (docs/webhooks.md "Which process delivers"): one api node and two
// agent workers over NATS and Redis (BullMQ). The receiver holds the first delivery open; the
// worker sending it is SIGKILLed; the other worker delivers the event again, same webhook-id.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

describe.skipIf(natsBinary === null || redisBinary === null)('webhooks in a fleet: 1 api node, 2 agent workers', () => {
  let w: WebhookFleet;

  // The first request is held open (the worker is killed while waiting); later ones get 200.
  beforeAll(async () => {
    w = await startWebhookFleet({ workers: 2, answer: (n) => (n === 1 ? 'hold' : 200), webhooks: { timeout_ms: 60_000 } });
  }, 120_000);

  afterAll(async () => w?.close());

  it('delivers an event whose worker is SIGKILLed mid-delivery through the other worker, with the same webhook-id', async () => {
    const { fleet, receiver, token, agent } = w;
    const created = await call(fleet.urls[0]!, 'POST', '/webhooks', { token, body: { agent_id: agent, url: `${receiver.url}/hook` } });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as { id: string; secret: string };

    const event = await publishAgentEvent(fleet, agent);
    await waitUntil(() => receiver.requests.length === 1, { timeoutMs: 15_000, message: 'the first delivery' });
    const first = receiver.requests[0]!;
    const pids = fleet.workers.map((w) => w.child.pid!);
    const sender = await pidOwningPort(pids, first.from_port);
    expect(sender, fleet.logs()).not.toBeNull();
    const victim = fleet.workers.find((w) => w.child.pid === sender)!;
    await victim.kill();

    // BullMQ finds the job stalled once its 2 s lock lapses; the surviving worker sends it again.
    await waitUntil(() => receiver.requests.length >= 2, { timeoutMs: 20_000, message: 'the redelivery by the other worker' });
    // The victim is dead (kill() waited for its exit): this one came from the surviving worker.
    const second = receiver.requests[1]!;
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    for (const request of [first, second]) expect(verifyWebhook(secret, request.headers, request.body, Math.floor(Date.now() / 1000))).toMatchObject({ ok: true });
    expect(JSON.parse(second.body)).toEqual({ type: 'invocation.completed', timestamp: event.occurred_at, data: event });

    await waitUntil(
      async () => ((await call(fleet.urls[0]!, 'GET', `/webhooks/${id}/deliveries`, { token })).body.deliveries as Array<{ delivered: boolean }>).some((d) => d.delivered),
      { timeoutMs: 5_000, message: 'the delivery in the log' },
    );
  }, 60_000);
});
