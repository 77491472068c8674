import { waitUntil } from '@agent-platform/testkit';
import { startHeldModel, type HeldModel } from '../testing/held-model.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// spec §Agents: "On invoke, a repeated idempotency_key returns the cached result as an error body
// with category DuplicateInvocation and HTTP 200". Keys are per agent and per caller, bound to
// the request they were first used with, and outlive restarts (docs/invocation.md).
let api: PlatformTestApi | null = null;
let held: HeldModel | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
  await held?.close();
  held = null;
});

const invoke = (t: PlatformTestApi, agentId: string, key: string, message = 'file claim 77', token?: string) =>
  t.request('POST', `/agents/${agentId}/invoke`, {
    body: { source: 'Api', message, correlation_id: `c-${key}`, idempotency_key: key },
    ...(token === undefined ? {} : { token }),
  });

async function executions(t: PlatformTestApi, agentId: string): Promise<number> {
  return (await t.deps.agentStats.read(agentId)).invocation_metrics.total_count;
}

describe('idempotency keys on invoke', () => {
  it('answers a repeat with 200 DuplicateInvocation holding the recorded result, without running again', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const first = await invoke(api, agent.id, 'k-1');
    expect(first.status).toBe(200);
    const repeat = await invoke(api, agent.id, 'k-1');
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual({
      error: {
        category: 'DuplicateInvocation',
        message: expect.stringContaining("'k-1'"),
        details: { idempotency_key: 'k-1', result: first.body },
      },
    });
    expect(await executions(api, agent.id)).toBe(1);
    expect((await api.request('GET', '/usage/summary')).body.requests).toBe(1);
  });

  it('runs 50 concurrent calls with one key exactly once', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const t = api;
    const replies = await Promise.all(Array.from({ length: 50 }, () => invoke(t, agent.id, 'burst')));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const fresh = replies.filter((r) => r.body.error === undefined);
    const duplicates = replies.filter((r) => r.body.error?.category === 'DuplicateInvocation');
    expect(fresh).toHaveLength(1);
    expect(duplicates).toHaveLength(49);
    for (const d of duplicates) expect(d.body.error.details.result).toEqual(fresh[0]!.body);
    expect(await executions(api, agent.id)).toBe(1);
    expect((await api.request('GET', '/usage/summary')).body.requests).toBe(1);
  });

  it('scopes keys per agent', async () => {
    api = await startPlatformTestApi();
    const a = await insertAgent(api);
    const b = await insertAgent(api);
    expect((await invoke(api, a.id, 'shared')).body.error).toBeUndefined();
    expect((await invoke(api, b.id, 'shared')).body.error).toBeUndefined();
    expect((await invoke(api, b.id, 'shared')).body.error.category).toBe('DuplicateInvocation');
  });

  it("scopes keys by caller: another caller's reuse of a key runs its own invocation and never sees the first reply", async () => {
    api = await startPlatformTestApi({ config: { auth: { mode: 'local' } } });
    const agent = await insertAgent(api);
    const alice = await api.issueKey('service', 'alice');
    const bob = await api.issueKey('service', 'bob');
    const first = await invoke(api, agent.id, 'order-1', 'private: claim of Alice', alice);
    expect(first.body).toMatchObject({ content: 'private: claim of Alice' });
    const other = await invoke(api, agent.id, 'order-1', 'claim of Bob', bob);
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ content: 'claim of Bob' });
    expect(JSON.stringify(other.body)).not.toContain('Alice');
    // Each caller's repeat still answers its own recorded result.
    expect((await invoke(api, agent.id, 'order-1', 'claim of Bob', bob)).body.error).toMatchObject({
      category: 'DuplicateInvocation',
      details: { result: other.body },
    });
    expect(await executions(api, agent.id)).toBe(2);
  });

  it('refuses a key reused for a different request with 409 Conflict, never the cached result', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const first = await invoke(api, agent.id, 'k-2', 'the first message');
    expect(first.status).toBe(200);
    const reused = await invoke(api, agent.id, 'k-2', 'a different message');
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatchObject({ category: 'Conflict', message: expect.stringContaining("'k-2'") });
    expect(JSON.stringify(reused.body)).not.toContain('the first message');
    expect(await executions(api, agent.id)).toBe(1);
  });

  it('lets a repeat wait for the running first call without taking a worker slot', async () => {
    held = await startHeldModel({ holds: (text) => text.startsWith('slow') });
    const model = held.server;
    api = await startPlatformTestApi({ config: { ...held.config, agents: { worker_concurrency: 2, invocation_timeout_secs: 10 } } });
    const agent = await insertAgent(api);
    const t = api;
    const first = invoke(t, agent.id, 'slow-key', 'slow first');
    await waitUntil(() => model.requests.length === 1, { message: 'the first call reaching the model' });
    const repeats = [invoke(t, agent.id, 'slow-key', 'slow first'), invoke(t, agent.id, 'slow-key', 'slow first')];
    // An unrelated invocation finds the second slot free although two repeats are waiting.
    const unrelated = await invoke(t, agent.id, 'other-key', 'quick one');
    expect(unrelated.body).toMatchObject({ content: 'quick one' });
    expect(model.requests).toHaveLength(2);
    held.release();
    const settled = await Promise.all([first, ...repeats]);
    expect(settled[0].body).toMatchObject({ content: 'slow first' });
    for (const repeat of settled.slice(1)) expect(repeat.body.error).toMatchObject({ category: 'DuplicateInvocation', details: { result: settled[0].body } });
    expect(model.requests).toHaveLength(2);
  });

  it('remembers a key across a restart', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const first = await invoke(api, agent.id, 'durable');
    await api.restart();
    const repeat = await invoke(api, agent.id, 'durable');
    expect(repeat.body.error).toMatchObject({ category: 'DuplicateInvocation', details: { result: first.body } });
  });

  it('forgets the key of a failed invocation, so a retry runs', async () => {
    api = await startPlatformTestApi({ licence: null });
    const agent = await insertAgent(api);
    expect((await invoke(api, agent.id, 'retry-me')).status).toBe(403);
    expect((await invoke(api, agent.id, 'retry-me')).status).toBe(403);
    expect(await executions(api, agent.id)).toBe(2);
  });
});
