import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidOwningPort, type AppProcess } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';
import { publishAgentEvent, startWebhookFleet, type WebhookFleet } from '../support/webhook-fleet.ts';

// A delivery whose worker dies at every attempt (issue 21 item 9): one api node and an agent
// worker over NATS and Redis (BullMQ), `[webhooks] max_attempts = 3`. The receiver never answers;
// each time a delivery reaches it, the worker sending it is SIGKILLed and a fresh worker started.
// Each lost run counts as an attempt (3 requests, not BullMQ's default of failing the job at its
// second stall), and the last one lost is recorded: a dead-letter entry in the delivery log.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const MAX_ATTEMPTS = 3;

describe.skipIf(natsBinary === null || redisBinary === null)('webhook deliveries whose worker is SIGKILLed at every attempt', () => {
  let w: WebhookFleet;

  // The receiver never answers: every attempt is lost with the worker sending it.
  beforeAll(async () => {
    w = await startWebhookFleet({ workers: 1, answer: () => 'hold', webhooks: { timeout_ms: 120_000, max_attempts: MAX_ATTEMPTS } });
  }, 120_000);

  afterAll(async () => w?.close());

  it('counts every lost run as an attempt and dead-letters the delivery when the last one is lost', async () => {
    const { fleet, receiver, token, agent } = w;
    const created = await call(fleet.urls[0]!, 'POST', '/webhooks', { token, body: { agent_id: agent, url: `${receiver.url}/hook` } });
    expect(created.status).toBe(201);
    const { id } = created.body as { id: string };
    await publishAgentEvent(fleet, agent);

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
