import { randomUUID } from 'node:crypto';
import { connectNatsBus } from '@agent-platform/bus/nats';
import { Streams, type PlatformEvent } from '@agent-platform/contracts';
import { createAgentStore } from '@agent-platform/domain';
import { agentFixture } from '@agent-platform/domain/testing';
import { verifyWebhook } from '@agent-platform/net';
import { requireBinary, startWebhookReceiver, waitUntil, type WebhookReceiver } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidOwningPort, startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Webhook deliveries in a fleet (docs/webhooks.md "Which process delivers"): one api node and two
// agent workers over NATS and Redis (BullMQ). The receiver holds the first delivery open; the
// worker sending it is SIGKILLed; the other worker delivers the event again, same webhook-id.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

describe.skipIf(natsBinary === null || redisBinary === null)('webhooks in a fleet: 1 api node, 2 agent workers', () => {
  let fleet: Fleet;
  let receiver: WebhookReceiver;
  let token: string;
  let agent: string;

  beforeAll(async () => {
    // The first request is held open (the worker is killed while waiting); later ones get 200.
    receiver = await startWebhookReceiver((n) => (n === 1 ? 'hold' : 200));
    fleet = await startFleet({
      apis: 1,
      workers: 2,
      schedulers: 0,
      config: {
        network: { allow_private_targets: true },
        webhooks: { timeout_ms: 60_000, backoff_base_ms: 100 },
        // A 2 s job lock: the killed worker's job is found stalled and sent again within seconds.
        runtime: { queue_job_lock_secs: 2 },
      },
    });
    token = (await call(fleet.urls[0]!, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
    const store = await fleet.openStore();
    try {
      agent = (await createAgentStore(store).insert(agentFixture())).id;
    } finally {
      await store.close();
    }
  }, 120_000);

  afterAll(async () => {
    await fleet?.close();
    await receiver?.close();
  });

  it('delivers an event whose worker is SIGKILLed mid-delivery through the other worker, with the same webhook-id', async () => {
    const created = await call(fleet.urls[0]!, 'POST', '/webhooks', { token, body: { agent_id: agent, url: `${receiver.url}/hook` } });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as { id: string; secret: string };

    const bus = await connectNatsBus({ servers: fleet.nats.url });
    const event: PlatformEvent = { id: randomUUID(), kind: 'invocation.completed', occurred_at: new Date().toISOString(), agent_id: agent, data: { tokens_used: 8 } };
    try {
      await bus.publish(Streams.platformEvents, { id: event.id, correlation_id: event.id, attempt: 1, occurred_at: event.occurred_at, data: event });
    } finally {
      await bus.close();
    }
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
