import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { createMemoryStore, type MemoryStore } from '../memory/memory-store.ts';
import { fixedClock } from '../time/clock.ts';
import type { AgentRecord } from './agent-record.ts';
import { createAgentStore, type AgentStore } from './agent-store.ts';
import { clearAgentStats, createAgentStats } from './create-agent-stats.ts';
import { createSessionStore, TRANSCRIPTS_COLLECTION, type TranscriptRecord } from './create-session-store.ts';
import type { SessionStore, SessionTurn } from './session-store.ts';
import { composeSystemPrompt } from './system-prompt.ts';

let dir: string;
let store: Store;
let agents: AgentStore;
const clock = fixedClock('2030-01-01T00:00:00.000Z');
const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-agent-stores-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  agents = createAgentStore(store);
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function agent(id: string, name: string, extra: Partial<AgentRecord> = {}): AgentRecord {
  return {
    id,
    name,
    version: '1.0.0',
    state: 'Suspended',
    description: 'd',
    prompt: 'p',
    equipped_competencies: [],
    allow_skill_tools: [],
    allow_integration_tools: [],
    model_preference: null,
    created_at: 'x',
    updated_at: 'x',
    running_since: null,
    ...extra,
  };
}

describe('agent store', () => {
  it('lists by name, finds by name and refuses a second agent of the same name', async () => {
    await agents.insert(agent(B, 'policy-servicing'));
    await agents.insert(agent(A, 'claims-intake'));
    expect((await agents.list()).map((a) => a.name)).toEqual(['claims-intake', 'policy-servicing']);
    expect((await agents.getByName('policy-servicing'))?.id).toBe(B);
    expect(await agents.getByName('absent')).toBeNull();
    await expect(
      agents.insert(agent('33333333-3333-4333-8333-333333333333', 'claims-intake')),
    ).rejects.toMatchObject({ category: 'Duplicate' });
  });

  it('keeps both of two racing updates', async () => {
    await agents.insert(agent(A, 'claims-intake'));
    await Promise.all([
      agents.update(A, (a) => ({ ...a, allow_skill_tools: [...a.allow_skill_tools, 'one'] })),
      agents.update(A, (a) => ({ ...a, allow_skill_tools: [...a.allow_skill_tools, 'two'] })),
    ]);
    expect([...(await agents.get(A))!.allow_skill_tools].sort()).toEqual(['one', 'two']);
    await expect(agents.update(B, (a) => a)).rejects.toMatchObject({ category: 'NotFound' });
  });

  it('deletes only when the guard allows it', async () => {
    await agents.insert(agent(A, 'claims-intake', { state: 'Running' }));
    const refuse = (a: AgentRecord) => {
      if (a.state === 'Running') throw new Error('running');
    };
    await expect(agents.delete(A, refuse)).rejects.toThrow('running');
    await agents.update(A, (a) => ({ ...a, state: 'Suspended' }));
    expect(await agents.delete(A, refuse)).toBe(true);
    expect(await agents.delete(A)).toBe(false);
  });
});

describe('session store', () => {
  let sessions: SessionStore;
  const turn = (content: string): SessionTurn => ({ role: 'user', content, at: clock.now().toISOString() });
  beforeEach(() => {
    sessions = createSessionStore(store, clock);
  });

  it('keeps the newest turns up to the bound, per agent', async () => {
    expect(await sessions.state(A)).toBe('empty');
    await sessions.append(A, [turn('1'), turn('2')], 3);
    await sessions.append(A, [turn('3'), turn('4')], 3);
    expect((await sessions.history(A)).map((t) => t.content)).toEqual(['2', '3', '4']);
    expect(await sessions.state(A)).toBe('active');
    expect(await sessions.history(B)).toEqual([]);
  });

  it('keeps every turn of concurrent appends', async () => {
    await Promise.all(['a', 'b', 'c', 'd'].map((c) => sessions.append(A, [turn(c)], 10)));
    expect((await sessions.history(A)).map((t) => t.content).sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('reset clears the canonical session only; deleteAll clears transcripts too', async () => {
    const transcripts = store.collection<TranscriptRecord>(TRANSCRIPTS_COLLECTION);
    const transcript = {
      id: `${A}:telegram`,
      agent_id: A,
      channel: 'telegram',
      turns: [turn('t')],
      updated_at: 'x',
    };
    await transcripts.insert(transcript);
    await transcripts.insert({ ...transcript, id: `${B}:telegram`, agent_id: B });
    await sessions.append(A, [turn('1')], 10);
    await sessions.reset(A);
    expect(await sessions.state(A)).toBe('empty');
    expect(await transcripts.count({ agent_id: A })).toBe(1);
    await sessions.append(A, [turn('2')], 10);
    await sessions.deleteAll(A);
    expect(await sessions.history(A)).toEqual([]);
    expect(await transcripts.count({ agent_id: A })).toBe(0);
    expect(await transcripts.count({ agent_id: B })).toBe(1);
  });
});

describe('agent stats', () => {
  it('counts per source; averages are floored; rows sorted by source', async () => {
    const stats = createAgentStats(store);
    for (let i = 0; i < 3; i++) await stats.received(A, 'Api');
    await stats.finished(A, 'Api', { ok: true, duration_ms: 10 });
    await stats.finished(A, 'Api', { ok: false, duration_ms: 11 });
    await stats.finished(A, 'Cron', { ok: true, duration_ms: 7 });
    await stats.finished(B, 'Api', { ok: true, duration_ms: 1000 });
    expect(await stats.read(A)).toEqual({
      tasks_received: 3,
      tasks_completed: 2,
      invocation_metrics: {
        total_count: 3,
        error_count: 1,
        avg_duration_ms: 9,
        by_source: [
          ['Api', 2, 1, 10],
          ['Cron', 1, 0, 7],
        ],
      },
    });
    await clearAgentStats(store.counters, A);
    expect(await stats.read(A)).toEqual({
      tasks_received: 0,
      tasks_completed: 0,
      invocation_metrics: { total_count: 0, error_count: 0, avg_duration_ms: 0, by_source: [] },
    });
    expect((await stats.read(B)).invocation_metrics.total_count).toBe(1);
  });
});

describe('memory store', () => {
  let memory: MemoryStore;
  beforeEach(async () => {
    memory = createMemoryStore(store, agents, clock);
    await agents.insert(agent(A, 'claims-intake'));
    await agents.insert(agent(B, 'policy-servicing'));
  });

  it('isolates agents and sorts by key', async () => {
    await memory.put(A, 'policy', 'P-1');
    await memory.put(A, 'claimant', 'Ana');
    await memory.put(B, 'policy', 'P-2');
    expect(await memory.list(A)).toEqual([
      { key: 'claimant', value: 'Ana' },
      { key: 'policy', value: 'P-1' },
    ]);
    expect(await memory.get(B, 'policy')).toEqual({ key: 'policy', value: 'P-2' });
    await expect(memory.get(B, 'claimant')).rejects.toMatchObject({ category: 'NotFound' });
    await memory.delete(A, 'policy');
    await memory.delete(A, 'policy');
    expect(await memory.list(A)).toEqual([{ key: 'claimant', value: 'Ana' }]);
    await memory.deleteAll(A);
    expect(await memory.list(A)).toEqual([]);
    expect(await memory.list(B)).toHaveLength(1);
  });

  it('refuses an unknown agent and bad keys', async () => {
    await expect(memory.put('33333333-3333-4333-8333-333333333333', 'k', 'v')).rejects.toMatchObject({
      category: 'NotFound',
    });
    await expect(memory.put(A, '', 'v')).rejects.toMatchObject({ category: 'ValidationError' });
    await expect(memory.put(A, 'x'.repeat(257), 'v')).rejects.toMatchObject({ category: 'ValidationError' });
    await expect(memory.put(A, 'tab\there', 'v')).rejects.toMatchObject({ category: 'ValidationError' });
    expect(await memory.put(A, 'é'.repeat(256), 'v')).toEqual({ key: 'é'.repeat(256), value: 'v' });
  });
});

describe('system prompt', () => {
  it('is the agent body, then each competency body in equip order, separated by a blank line', () => {
    expect(
      composeSystemPrompt({ prompt: 'You take claims.\n' }, [
        { prompt: '\nTriage first.\n' },
        { prompt: 'Then summarise.' },
      ]),
    ).toBe('You take claims.\n\nTriage first.\n\nThen summarise.');
    expect(composeSystemPrompt({ prompt: 'Alone.' }, [])).toBe('Alone.');
  });
});
