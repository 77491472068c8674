import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformEvent, TriggerPattern } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../time/clock.ts';
import { webhookCollection } from '../webhooks/webhook-record.ts';
import { storedEventInterest } from './event-interest.ts';
import { createEventPublisher } from './event-publisher.ts';
import { createTriggerStore } from './trigger-store.ts';

// Which events are published at all (docs/events.md "Where events are published"): only those a
// trigger may match or a webhook of their agent takes; and never fewer than those.
let dir: string;
let store: Store;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-event-interest-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => new Date() });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function completed(agentId: string | null, source = 'Api'): PlatformEvent {
  return {
    id: `e-${Math.random()}`,
    kind: 'invocation.completed',
    occurred_at: new Date().toISOString(),
    agent_id: agentId,
    data: { invocation_id: 'i-1', correlation_id: 'c-1', source, duration_ms: 1, tokens_used: 1, content: 'ok' },
  };
}

async function addTrigger(pattern: TriggerPattern, agentId = 'agent-t'): Promise<void> {
  await createTriggerStore(store, systemClock).insert({ agent_id: agentId, pattern, prompt_template: '{{event}}', max_fires: 0 });
}

async function addWebhook(agentId: string): Promise<void> {
  await webhookCollection(store).insert({ id: `w-${agentId}`, agent_id: agentId, url: 'https://example.test/hook', created_at: new Date().toISOString(), secret_sealed: 'x' });
}

describe('storedEventInterest', () => {
  it('says no while no trigger and no webhook exists, yes once one that takes the event does', async () => {
    const interest = storedEventInterest(store, systemClock);
    expect(await interest(completed('agent-a'))).toBe(false);
    await addWebhook('agent-b');
    expect(await interest(completed('agent-a'))).toBe(false);
    expect(await interest(completed('agent-b'))).toBe(true);
    await addTrigger({ invocation_completed: { agent_id: 'agent-c' } });
    expect(await interest(completed('agent-a'))).toBe(false);
    expect(await interest(completed('agent-c'))).toBe(true);
    expect(await interest(completed(null))).toBe(false);
  });

  it('a trigger matches by its whole pattern, filters included', async () => {
    const interest = storedEventInterest(store, systemClock);
    await addTrigger({ invocation_completed: { source: 'Schedule' }, lifecycle: {} });
    expect(await interest(completed('agent-a', 'Api'))).toBe(false);
    expect(await interest(completed('agent-a', 'Schedule'))).toBe(true);
    const suspended: PlatformEvent = { id: 'e-s', kind: 'agent.suspended', occurred_at: new Date().toISOString(), agent_id: 'agent-a', data: { name: 'n', state: 'Suspended' } };
    expect(await interest(suspended)).toBe(true);
  });

  it('a key or a filter this node does not know counts as a match (a newer worker may know it)', async () => {
    const interest = storedEventInterest(store, systemClock);
    await addTrigger({ invocation_completed: { newer_filter: 'x' } });
    expect(await interest(completed('agent-a'))).toBe(true);
    await store.close();
    store = await openEmbeddedStore({ path: join(dir, 'other.db'), clock: () => new Date() });
    await addTrigger({ newer_key: {} });
    expect(await storedEventInterest(store, systemClock)(completed('agent-a'))).toBe(true);
  });
});

describe('the publisher with an interest', () => {
  function publisherWith(interest: (event: PlatformEvent) => Promise<boolean>) {
    const published: string[] = [];
    const counted: string[] = [];
    const publisher = createEventPublisher({
      bus: { publish: async (_stream, envelope) => (published.push(envelope.id), { duplicate: false }) },
      clock: systemClock,
      warn: () => undefined,
      onEmit: (kind) => void counted.push(kind),
      interest,
    });
    return { publisher, published, counted };
  }

  it('publishes only what something takes, and counts every event', async () => {
    const { publisher, published, counted } = publisherWith(async (event) => event.agent_id === 'wanted');
    await publisher.emit('agent.suspended', { id: 'e-1', agent_id: 'other', data: { name: 'n', state: 'Suspended' } });
    await publisher.emit('agent.suspended', { id: 'e-2', agent_id: 'wanted', data: { name: 'n', state: 'Suspended' } });
    expect(published).toEqual(['e-2']);
    expect(counted).toEqual(['agent.suspended', 'agent.suspended']);
  });

  it('publishes when the check fails (the store unreachable): the consumers decide, as without it', async () => {
    const { publisher, published } = publisherWith(async () => {
      throw new Error('store down');
    });
    await publisher.emit('agent.suspended', { id: 'e-3', agent_id: 'a', data: { name: 'n', state: 'Suspended' } });
    expect(published).toEqual(['e-3']);
  });
});
