import { randomUUID } from 'node:crypto';
import { connectNatsBus } from '@agent-platform/bus/nats';
import { Streams, type PlatformEvent } from '@agent-platform/contracts';
import { createAgentStore } from '@agent-platform/domain';
import { agentFixture } from '@agent-platform/domain/testing';
import { startWebhookReceiver, type WebhookReceiver } from '@agent-platform/testkit';
import { startFleet, type Fleet } from './fleet.ts';
import { call } from './platform-process.ts';

export interface WebhookFleet {
  fleet: Fleet;
  receiver: WebhookReceiver;
  /** An admin key of the api node. */
  token: string;
  /** An agent written straight to the store, for webhooks to watch. */
  agent: string;
  close(): Promise<void>;
}

/**
 * One api node and `workers` agent workers over NATS and Redis (BullMQ), a webhook receiver that
 * answers the n-th request with `answer(n)`, and a 2 s queue job lock, so that a job whose worker
 * was SIGKILLed is found stalled within seconds (docs/webhooks.md "Which process delivers").
 */
export async function startWebhookFleet(options: {
  workers: number;
  answer: Parameters<typeof startWebhookReceiver>[0];
  webhooks: Record<string, unknown>;
}): Promise<WebhookFleet> {
  const receiver = await startWebhookReceiver(options.answer);
  const fleet = await startFleet({
    apis: 1,
    workers: options.workers,
    schedulers: 0,
    config: {
      network: { allow_private_targets: true },
      webhooks: { backoff_base_ms: 100, ...options.webhooks },
      runtime: { queue_job_lock_secs: 2 },
    },
  });
  const token = (await call(fleet.urls[0]!, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret as string;
  const store = await fleet.openStore();
  let agent: string;
  try {
    agent = (await createAgentStore(store).insert(agentFixture())).id;
  } finally {
    await store.close();
  }
  return {
    fleet,
    receiver,
    token,
    agent,
    close: async () => {
      await fleet.close();
      await receiver.close();
    },
  };
}

/** Publishes an `invocation.completed` event of `agent` on the fleet's NATS, as a worker would. */
export async function publishAgentEvent(fleet: Fleet, agent: string): Promise<PlatformEvent> {
  const bus = await connectNatsBus({ servers: fleet.nats.url });
  const event: PlatformEvent = { id: randomUUID(), kind: 'invocation.completed', occurred_at: new Date().toISOString(), agent_id: agent, data: { tokens_used: 8 } };
  try {
    await bus.publish(Streams.platformEvents, { id: event.id, correlation_id: event.id, attempt: 1, occurred_at: event.occurred_at, data: event });
  } finally {
    await bus.close();
  }
  return event;
}
