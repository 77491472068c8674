import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformEvent } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentStore, type AgentStore } from '../agents/agent-store.ts';
import { agentFixture } from '../testing/agent-fixture.ts';
import { waitUntil } from '@agent-platform/testkit';
import { fixedClock, systemClock } from '../time/clock.ts';
import { createTriggerFireSweeper } from './trigger-fire-sweeper.ts';
import { createTriggerMatcher, type TriggerInvocation } from './trigger-matcher.ts';
import { matchesPattern, wildcardMatch } from './trigger-pattern.ts';
import { createTriggerStore, LOST_FIRE_ERROR, type TriggerStore } from './trigger-store.ts';

// The matcher over a real embedded store: what the agent worker's consumer calls per event.
let dir: string;
let store: Store;
let agents: AgentStore;
let triggers: TriggerStore;
const invoked: TriggerInvocation[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-triggers-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => new Date() });
  agents = createAgentStore(store);
  triggers = createTriggerStore(store, systemClock);
  invoked.length = 0;
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const matcher = () => createTriggerMatcher({ triggers, agents, invoke: async (i) => void invoked.push(i), warn: () => undefined });
const event = (overrides: Partial<PlatformEvent> = {}): PlatformEvent => ({
  id: 'evt-1',
  kind: 'agent.installed',
  occurred_at: new Date().toISOString(),
  agent_id: 'a-1',
  data: { name: 'claims-intake', version: '1.0.0', state: 'Suspended' },
  ...overrides,
});

describe('one event fires one trigger at most once', () => {
  it('a redelivered event, or one handled by two consumers at once, invokes the agent once', async () => {
    const agent = await agents.insert(agentFixture());
    const t = await triggers.insert({ agent_id: agent.id, pattern: { agent_spawned: { name_pattern: 'claims-*' } }, prompt_template: 'New: {{event}}', max_fires: 0 });
    const e = event();
    await Promise.all([matcher().handle(e), matcher().handle(e)]);
    await matcher().handle(e);
    expect(invoked).toEqual([
      {
        agent_id: agent.id,
        message: `New: ${JSON.stringify(e)}`,
        source: { Trigger: { trigger_id: t.id, event_id: 'evt-1', event_kind: 'agent.installed', chain: [t.id] } },
        idempotency_key: `trigger:${t.id}:evt-1`,
        correlation_id: `trigger:${t.id}:evt-1`,
      },
    ]);
    expect((await triggers.get(t.id))?.fires_count).toBe(1);
    expect((await triggers.fires(t.id, 10)).map((f) => f.outcome)).toEqual(['fired']);
  });

  it('a failed invocation is recorded `failed` and still counts as a fire', async () => {
    const agent = await agents.insert(agentFixture());
    const t = await triggers.insert({ agent_id: agent.id, pattern: { lifecycle: {} }, prompt_template: '{{event}}', max_fires: 1 });
    const failing = createTriggerMatcher({ triggers, agents, invoke: async () => Promise.reject(Object.assign(new Error('x'), { category: 'Timeout', message: 'too slow' })), warn: () => undefined });
    await failing.handle(event());
    expect(await triggers.fires(t.id, 10)).toEqual([expect.objectContaining({ outcome: 'failed', error: 'Timeout: too slow' })]);
    expect((await triggers.get(t.id))?.fires_count).toBe(1);
  });
});

describe('a fire whose worker died between its claim and its end', () => {
  it('is recorded failed (lost) once its lease lapses, not left running; finished and live fires are left alone', async () => {
    const clock = fixedClock(new Date());
    const timed = createTriggerStore(store, clock);
    const sweeper = createTriggerFireSweeper({ triggers: timed, intervalMs: () => 1_000, warn: () => undefined });
    const t = await timed.insert({ agent_id: 'a-1', pattern: { lifecycle: {} }, prompt_template: '{{event}}', max_fires: 0 });
    // What a worker killed after its claim leaves: a running record nobody renews.
    expect(await timed.claim({ trigger_id: t.id, event_id: 'evt-dead', event_kind: 'agent.installed', outcome: 'running' }, 3_000)).toBe(true);
    expect(await timed.claim({ trigger_id: t.id, event_id: 'evt-done', event_kind: 'agent.installed', outcome: 'running' }, 3_000)).toBe(true);
    await timed.finish(t.id, 'evt-done', 'fired');
    clock.advance(2_000);
    expect(await sweeper.sweepOnce()).toBe(0);
    clock.advance(1_500);
    expect(await sweeper.sweepOnce()).toBe(1);
    expect(await sweeper.sweepOnce()).toBe(0);
    const fires = await timed.fires(t.id, 10);
    expect(fires.find((f) => f.event_id === 'evt-dead')).toMatchObject({ outcome: 'failed', error: LOST_FIRE_ERROR, finished_at: clock.now().toISOString() });
    expect(fires.find((f) => f.event_id === 'evt-done')).toMatchObject({ outcome: 'fired', error: null });
    // The redelivered event still fires nothing: at most once.
    expect(await timed.claim({ trigger_id: t.id, event_id: 'evt-dead', event_kind: 'agent.installed', outcome: 'running' }, 3_000)).toBe(false);
  });

  it('a fire that outlasts its lease keeps it renewed while the invocation runs, and ends fired', async () => {
    const agent = await agents.insert(agentFixture());
    const t = await triggers.insert({ agent_id: agent.id, pattern: { lifecycle: {} }, prompt_template: '{{event}}', max_fires: 0 });
    let answer = (): void => undefined;
    const slow = createTriggerMatcher({ triggers, agents, warn: () => undefined, leaseMs: () => 300, invoke: () => new Promise<void>((resolve) => (answer = resolve)) });
    const handled = slow.handle(event());
    await waitUntil(async () => (await triggers.fires(t.id, 1))[0]?.outcome === 'running');
    const claimed = (await store.collection<{ id: string; lease_until?: string }>('trigger_fires').get(`${t.id}:evt-1`))!.doc.lease_until!;
    await waitUntil(async () => Date.now() > Date.parse(claimed) + 300);
    expect(await triggers.sweepLost()).toBe(0);
    answer();
    await handled;
    expect((await triggers.fires(t.id, 1))[0]).toMatchObject({ outcome: 'fired', error: null });
  });
});

describe('patterns', () => {
  it('wildcards match whole names; filters compare fields; any key of a pattern may match', () => {
    expect(wildcardMatch('claims-*', 'claims-intake')).toBe(true);
    expect(wildcardMatch('claims-*', 'my-claims-intake')).toBe(false);
    expect(wildcardMatch('*-intake', 'fnol-intake')).toBe(true);
    expect(wildcardMatch('a.b', 'axb')).toBe(false);
    const e = event();
    expect(matchesPattern({ lifecycle: {} }, e)).toBe(true);
    expect(matchesPattern({ lifecycle: { agent_id: 'other' } }, e)).toBe(false);
    expect(matchesPattern({ agent_installed: { name_pattern: 'claims-intake' } }, e)).toBe(true);
    expect(matchesPattern({ invocation_failed: {} }, e)).toBe(false);
    expect(matchesPattern({ invocation_failed: {}, agent_spawned: {} }, e)).toBe(true);
  });
});
