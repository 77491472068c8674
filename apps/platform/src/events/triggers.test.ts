import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformEvent } from '@agent-platform/contracts';
import { writePackage } from '@agent-platform/domain/testing';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Triggers in the all-in-one (docs/events.md "Triggers"): real events from real operations
// (invocations, suspend/activate, installs) reach the trigger matcher of the agent worker, which
// invokes the trigger's agent on the built-in echo model (D6): the agent's reply is its prompt,
// so the session shows the rendered `prompt_template`.
let api: PlatformTestApi;
let root: string;

beforeAll(async () => {
  api = await startPlatformTestApi();
  root = await mkdtemp(join(tmpdir(), 'ap-trigger-packages-'));
});
afterAll(async () => {
  await api.close();
  await rm(root, { recursive: true, force: true });
});

const createTrigger = async (agentId: string, body: Record<string, unknown>): Promise<string> => {
  const res = await api.request('POST', `/agents/${agentId}/triggers`, { body });
  expect(res.status).toBe(201);
  return res.body.id as string;
};
const trigger = async (id: string) =>
  ((await api.request('GET', '/triggers')).body.triggers as Array<{ id: string; fires_count: number }>).find((t) => t.id === id);
const fires = async (id: string) => (await api.request('GET', `/triggers/${id}/fires`)).body.fires as Array<{ outcome: string; event_kind: string; error: string | null }>;
/** The events the echo model answered with: each reply is the rendered prompt. */
const repliedEvents = async (agentId: string, prefix: string): Promise<PlatformEvent[]> =>
  (await api.deps.sessions.history(agentId))
    .filter((t) => t.role === 'assistant' && t.content.startsWith(prefix))
    .map((t) => JSON.parse(t.content.slice(prefix.length)) as PlatformEvent);

describe('per-kind keys with filters', () => {
  it('invocation_completed filtered to a source agent fires once per completion and renders {{event}} as JSON', async () => {
    const source = await insertAgent(api, { name: 'fnol-intake' });
    const other = await insertAgent(api, { name: 'other-agent' });
    const watcher = await insertAgent(api, { name: 'claims-watcher' });
    const id = await createTrigger(watcher.id, {
      pattern: { invocation_completed: { agent_id: source.id } },
      prompt_template: 'Review this: {{event}}',
    });

    expect((await api.request('POST', `/agents/${source.id}/send`, { body: { message: 'New claim 77' } })).status).toBe(200);
    expect((await api.request('POST', `/agents/${other.id}/send`, { body: { message: 'not watched' } })).status).toBe(200);
    await waitUntil(async () => (await fires(id)).some((f) => f.outcome === 'fired'), { message: 'the trigger to fire' });

    const [event, ...more] = await repliedEvents(watcher.id, 'Review this: ');
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      kind: 'invocation.completed',
      agent_id: source.id,
      data: { source: 'Api', content: 'New claim 77', tokens_used: expect.any(Number) },
    });
    expect((await trigger(id))?.fires_count).toBe(1);
    // The other agent's completion did not match, and the watcher's own completion carries the
    // trigger chain: nothing fired again.
    expect(await fires(id)).toEqual([expect.objectContaining({ outcome: 'fired', event_kind: 'invocation.completed', error: null })]);
  });

  it('an unfiltered trigger is not fired again by the events of its own invocation (loop rule)', async () => {
    const agent = await insertAgent(api, { name: 'loop-prone' });
    const id = await createTrigger(agent.id, { pattern: { invocation_completed: { agent_id: agent.id } } });
    await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'start' } });
    await waitUntil(async () => (await fires(id)).some((f) => f.outcome === 'skipped_loop'), { message: 'the loop to be refused' });
    const outcomes = (await fires(id)).map((f) => f.outcome).sort();
    expect(outcomes).toEqual(['fired', 'skipped_loop']);
    expect((await trigger(id))?.fires_count).toBe(1);
    // The default template (spec): `Event: {{event}}`.
    expect((await repliedEvents(agent.id, 'Event: ')).map((e) => e.data['content'])).toEqual(['start']);
  });
});

describe('lifecycle and agent_spawned (the spec keys)', () => {
  it('lifecycle {} fires on suspend and activate of any agent', async () => {
    const target = await insertAgent(api, { name: 'claims-lifecycle-target' });
    const watcher = await insertAgent(api, { name: 'lifecycle-watcher' });
    const id = await createTrigger(watcher.id, { pattern: { lifecycle: { agent_id: target.id } }, prompt_template: 'LC {{event}}' });
    expect((await api.request('POST', `/agents/${target.id}/suspend`)).status).toBe(200);
    expect((await api.request('POST', `/agents/${target.id}/activate`)).status).toBe(200);
    await waitUntil(async () => (await repliedEvents(watcher.id, 'LC ')).length === 2, { message: 'two lifecycle fires' });
    const kinds = (await repliedEvents(watcher.id, 'LC ')).map((e) => [e.kind, e.agent_id, e.data['state']]);
    expect(kinds.sort()).toEqual([
      ['agent.activated', target.id, 'Running'],
      ['agent.suspended', target.id, 'Suspended'],
    ]);
    expect((await trigger(id))?.fires_count).toBe(2);
  });

  it('agent_spawned {name_pattern: "claims-*"} fires on installing a matching agent only, and an uninstall removes the agent\'s own triggers', async () => {
    const watcher = await insertAgent(api, { name: 'spawn-watcher' });
    const id = await createTrigger(watcher.id, { pattern: { agent_spawned: { name_pattern: 'claims-*' } }, prompt_template: 'Spawned {{ event }}' });
    const matching = await writePackage(root, { type: 'agent-template', name: 'claims-triage', body: 'Triage claims.' });
    const other = await writePackage(root, { type: 'agent-template', name: 'policy-helper', body: 'Help with policies.' });
    expect((await api.request('POST', '/catalog/install', { body: { path: other } })).status).toBe(201);
    expect((await api.request('POST', '/catalog/install', { body: { path: matching } })).status).toBe(201);
    await waitUntil(async () => (await repliedEvents(watcher.id, 'Spawned ')).length === 1, { message: 'the spawn fire' });
    const [event] = await repliedEvents(watcher.id, 'Spawned ');
    expect(event).toMatchObject({ kind: 'agent.installed', data: { name: 'claims-triage', version: expect.any(String) } });
    expect((await trigger(id))?.fires_count).toBe(1);

    // The installed agent gets a trigger; uninstalling it removes that trigger (docs/events.md).
    const installed = (await api.deps.agents.getByName('claims-triage'))!;
    const own = await createTrigger(installed.id, { pattern: { schedule_fired: {} } });
    if (installed.state === 'Running') await api.request('POST', `/agents/${installed.id}/suspend`);
    expect((await api.request('DELETE', '/catalog/installed/claims-triage')).status).toBeLessThan(300);
    expect(await trigger(own)).toBeUndefined();
    expect((await api.request('GET', `/triggers/${own}/fires`)).status).toBe(404);
  });
});

describe('Suspended agents and max_fires', () => {
  it("a Suspended agent's trigger does not fire; the skip is recorded and not counted", async () => {
    const source = await insertAgent(api, { name: 'busy-source' });
    const sleeper = await insertAgent(api, { name: 'sleeper', state: 'Suspended' });
    const id = await createTrigger(sleeper.id, { pattern: { invocation_completed: { agent_id: source.id } } });
    await api.request('POST', `/agents/${source.id}/send`, { body: { message: 'ping' } });
    await waitUntil(async () => (await fires(id)).length === 1, { message: 'the fire record' });
    expect(await fires(id)).toEqual([expect.objectContaining({ outcome: 'skipped_suspended', error: expect.stringContaining('Suspended') })]);
    expect((await trigger(id))?.fires_count).toBe(0);
    expect(await api.deps.sessions.history(sleeper.id)).toEqual([]);
  });

  it('max_fires holds under 20 concurrent events: exactly 2 fires', async () => {
    const source = await insertAgent(api, { name: 'burst-source' });
    const target = await insertAgent(api, { name: 'burst-target' });
    const id = await createTrigger(target.id, { pattern: { invocation_completed: { agent_id: source.id } }, max_fires: 2, prompt_template: 'Burst {{event}}' });
    // A witness: an unlimited trigger of a Suspended agent records every event it is matched with.
    const witness = await createTrigger((await insertAgent(api, { name: 'burst-witness', state: 'Suspended' })).id, { pattern: { invocation_completed: { agent_id: source.id } } });
    const sends = await Promise.all(Array.from({ length: 20 }, (_, i) => api.request('POST', `/agents/${source.id}/send`, { body: { message: `m${i}` } })));
    expect(sends.every((r) => r.status === 200)).toBe(true);
    await waitUntil(async () => (await repliedEvents(target.id, 'Burst ')).length === 2, { message: 'two fires' });
    // Every event was matched (the witness saw all 20) and no fire is still on its way.
    await waitUntil(async () => (await fires(witness)).length === 20, { message: 'all 20 events matched' });
    await waitUntil(async () => (await fires(id)).every((f) => f.outcome !== 'running'), { message: 'fires settled' });
    expect((await trigger(id))?.fires_count).toBe(2);
    expect((await repliedEvents(target.id, 'Burst ')).length).toBe(2);
    expect((await fires(id)).filter((f) => f.outcome === 'fired')).toHaveLength(2);
  });
});
