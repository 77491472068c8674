import { randomUUID } from 'node:crypto';
import { connectNatsBus } from '@agent-platform/bus/nats';
import { Streams, type PlatformEvent } from '@agent-platform/contracts';
import { createAgentStore } from '@agent-platform/domain';
import { agentFixture } from '@agent-platform/domain/testing';
import { requireBinary, startWebhookReceiver, waitUntil, type WebhookReceiver } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidOwningPort, startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// A delivery whose worker dies at every attempt (issue 21 item 9): one api node and an agent
// worker over NATS and Redis (BullMQ), `[webhooks] max_attempts = 3`. The receiver never answers;
// each time a delivery reaches it, the worker sending it is SIGKILLed and a fresh worker started.
// Each lost run counts as an attempt (3 requests, not BullMQ's default of failing the job at its
// second stall), and the last one lost is recorded: a dead-letter entry in the delivery log.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const MAX_ATTEMPTS = 3;

describe.skipIf(natsBinary === null || redisBinary === null)('webhook deliveries whose worker is SIGKILLed at every attempt', () => {
  let fleet: Fleet;
  let receiver: WebhookReceiver;
  let token: string;
  let agent: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver(() => 'hold');
    fleet = await startFleet({
      apis: 1,
      workers: 1,
      schedulers: 0,
      config: {
        network: { allow_private_targets: true },
        webhooks: { timeout_ms: 120_000, backoff_base_ms: 100, max_attempts: MAX_ATTEMPTS },
        // A 2 s job lock: a killed worker's job is found stalled within seconds.
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

  it('counts every lost run as an attempt and dead-letters the delivery when the last one is lost', async () => {
    const created = await call(fleet.urls[0]!, 'POST', '/webhooks', { token, body: { agent_id: agent, url: `${receiver.url}/hook` } });
    expect(created.status).toBe(201);
    const { id } = created.body as { id: string };
    const bus = await connectNatsBus({ servers: fleet.nats.url });
    const event: PlatformEvent = { id: randomUUID(), kind: 'invocation.completed', occurred_at: new Date().toISOString(), agent_id: agent, data: { tokens_used: 8 } };
    try {
      await bus.publish(Streams.platformEvents, { id: event.id, correlation_id: event.id, attempt: 1, occurred_at: event.occurred_at, data: event });
    } finally {
      await bus.close();
    }

    const workers: AppProcess[] = [...fleet.workers];
    for (let n = 1; n <= MAX_ATTEMPTS; n++) {
      await waitUntil(() => receiver.requests.length >= n, { timeoutMs: 60_000, message: `delivery request ${n}` }).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${fleet.logs()}`);
      });
      const sender = await pidOwningPort(workers.map((w) => w.child.pid!), receiver.requests[n - 1]!.from_port);
      const victim = workers.find((w) => w.child.pid === sender);
      expect(victim, `the worker sending request ${n}`).toBeDefined();
      await victim!.kill();
      workers.splice(workers.indexOf(victim!), 1);
      workers.push(await fleet.add('agent-worker'));
    }

    const deadLetters = async () =>
      (await call(fleet.urls[0]!, 'GET', `/webhooks/${id}/deliveries?dead_letter=true`, { token })).body.deliveries as Array<{
        attempt: number;
        delivered: boolean;
        dead_letter: boolean;
        message_id: string;
        error: string;
      }>;
    await waitUntil(async () => (await deadLetters()).length > 0, { timeoutMs: 30_000, message: 'the dead letter of the lost last attempt' }).catch(
      (error: unknown) => {
        throw new Error(`${(error as Error).message}\n${fleet.logs()}`);
      },
    );
    const [entry, ...more] = await deadLetters();
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ attempt: MAX_ATTEMPTS, delivered: false, dead_letter: true, message_id: receiver.requests[0]!.headers['webhook-id'] });
    expect(entry!.error).toMatch(/was lost with its worker/);
    // Every request carried the same webhook-id, and no fourth attempt was made.
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(receiver.requests).toHaveLength(MAX_ATTEMPTS);
  }, 240_000);
});
