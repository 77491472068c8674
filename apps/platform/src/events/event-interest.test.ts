import { Streams, type PlatformEvent } from '@agent-platform/contracts';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// docs/events.md "Where events are published": the all-in-one publishes an event on
// `platform.events` only when a trigger may match it or a webhook of its agent takes it. A test
// durable of its own sees what is published; the metrics count every event emitted.
let api: PlatformTestApi;
const published: PlatformEvent[] = [];

beforeAll(async () => {
  // The webhooks point at a closed loopback port: their deliveries fail, once each.
  api = await startPlatformTestApi({ config: { network: { allow_private_targets: true }, webhooks: { max_attempts: 1 } } });
  await api.deps.bus.consume<PlatformEvent>(Streams.platformEvents, { durable: 'test-interest', maxDeliver: 1, backoffMs: [0] }, async (e) => void published.push(e.data));
});
afterAll(async () => {
  await api.close();
});

const send = async (agentId: string, message: string): Promise<void> => {
  expect((await api.request('POST', `/agents/${agentId}/send`, { body: { message } })).status).toBe(200);
};
const completions = (agentId: string) => published.filter((e) => e.kind === 'invocation.completed' && e.agent_id === agentId).map((e) => e.data['content']);
const emittedCount = async (): Promise<number> => {
  const text = String((await api.request('GET', '/metrics')).body);
  const line = text.split('\n').find((l) => l.startsWith('platform_events_total{') && l.includes('kind="invocation.completed"'));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
};

describe('which events are published', () => {
  it('an agent without webhooks or triggers publishes nothing; once a webhook exists, its next events are published', async () => {
    const agent = await insertAgent(api, { name: 'quiet-agent' });
    const before = await emittedCount();
    await send(agent.id, 'before the webhook');
    // Counted as emitted, not published.
    await waitUntil(async () => (await emittedCount()) === before + 1, { message: 'the send counted in platform_events_total' });

    const created = await api.request('POST', '/webhooks', { body: { agent_id: agent.id, url: 'http://127.0.0.1:9/hook' } });
    expect(created.status).toBe(201);
    await send(agent.id, 'after the webhook');
    await waitUntil(() => completions(agent.id).length > 0, { message: 'the second completion published' });
    expect(completions(agent.id)).toEqual(['after the webhook']);

    // After the delete its events stop again. A marker agent with a webhook of its own is sent to
    // next: the stream delivers in order, so once the marker's event arrived, an event published
    // before it would have too.
    expect((await api.request('DELETE', `/webhooks/${created.body.id as string}`)).status).toBe(204);
    const marker = await insertAgent(api, { name: 'marker-agent' });
    expect((await api.request('POST', '/webhooks', { body: { agent_id: marker.id, url: 'http://127.0.0.1:9/hook' } })).status).toBe(201);
    await send(agent.id, 'after the delete');
    await send(marker.id, 'marker');
    await waitUntil(() => completions(marker.id).length > 0, { message: 'the marker completion published' });
    expect(completions(agent.id)).toEqual(['after the webhook']);
  });

  it('a trigger on another agent\'s completions makes exactly those published', async () => {
    const source = await insertAgent(api, { name: 'watched-source' });
    const other = await insertAgent(api, { name: 'unwatched-other' });
    const watcher = await insertAgent(api, { name: 'the-watcher' });
    const created = await api.request('POST', `/agents/${watcher.id}/triggers`, { body: { pattern: { invocation_completed: { agent_id: source.id } } } });
    expect(created.status).toBe(201);
    await send(other.id, 'not watched');
    await send(source.id, 'watched');
    await waitUntil(() => completions(source.id).length > 0, { message: 'the watched completion published' });
    expect(completions(source.id)).toEqual(['watched']);
    expect(completions(other.id)).toEqual([]);
  });
});
