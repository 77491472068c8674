import { newWebhookSecret, signWebhook } from '@agent-platform/net';
import { startWebhookPeer, type WebhookPeer } from '@agent-platform/channels/testing';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkflowPlatform, type WorkflowPlatform } from '../testing/workflow-harness.ts';

// Channel messages in the metrics catalogue (docs/observability.md): an inbound message counted
// `in` by the worker that routed it, its reply counted `out` by the bridge that sent it, by kind.
let platform: WorkflowPlatform;
let peer: WebhookPeer;
const secret = newWebhookSecret();

const call = (method: string, path: string, body?: unknown) =>
  platform.api.request(method, path, { token: platform.token, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  platform = await startWorkflowPlatform({
    agents: ['alpha'],
    key: { role: 'admin' },
    config: { network: { allow_private_targets: true } },
  });
  peer = await startWebhookPeer();
  expect(
    (await call('POST', '/catalog/install', { path: `${platform.shelf.dir}/alpha`, activate: true })).status,
  ).toBe(201);
  const alpha = ((await call('GET', '/agents')).body.agents as Array<{ id: string }>)[0]!.id;
  expect(
    (
      await call('POST', '/channels', {
        id: 'web',
        kind: 'webhook',
        config: { secret, url: peer.url },
        default_agent: alpha,
      })
    ).status,
  ).toBe(201);
  await waitUntil(async () => (await call('GET', '/channels')).body.channels[0]?.status === 'Connected', {
    timeoutMs: 10_000,
    message: 'the channel Connected',
  });
}, 60_000);
afterAll(async () => {
  await platform?.close();
  await peer?.close();
});

describe('channel metrics', () => {
  it('counts the inbound message and the reply sent, by kind', async () => {
    const text = JSON.stringify({ id: 'm-1', conversation: 'ann', text: 'hello' });
    const inbound = await platform.api.request('POST', '/channels/web/inbound', {
      body: text,
      headers: {
        'content-type': 'application/json',
        ...signWebhook(secret, 'w-1', Math.floor(Date.now() / 1000), text),
      },
    });
    expect(inbound.status).toBe(202);
    await waitUntil(() => peer.received.length === 1, {
      timeoutMs: 15_000,
      message: 'the reply at the peer',
    });
    const metrics = async (): Promise<string> => String((await call('GET', '/metrics')).body);
    await waitUntil(
      async () =>
        (await metrics()).includes('channel_messages_total{direction="out",kind="webhook",outcome="sent"} 1'),
      {
        timeoutMs: 5_000,
        message: 'the reply counted',
      },
    );
    expect(await metrics()).toContain(
      'channel_messages_total{direction="in",kind="webhook",outcome="received"} 1',
    );
  });
});
