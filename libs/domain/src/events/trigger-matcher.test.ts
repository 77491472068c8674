import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformEvent } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentStore, type AgentStore } from '../agents/agent-store.ts';
import { agentFixture } from '../testing/agent-fixture.ts';
import { systemClock } from '../time/clock.ts';
import { createTriggerMatcher, type TriggerInvocation } from './trigger-matcher.ts';
import { matchesPattern, wildcardMatch } from './trigger-pattern.ts';
import { createTriggerStore, type TriggerStore } from './trigger-store.ts';

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
