import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// spec §Agents: "On invoke, a repeated idempotency_key returns the cached result as an error body
// with category DuplicateInvocation and HTTP 200". Keys are per agent and outlive restarts.
let api: PlatformTestApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

const invoke = (t: PlatformTestApi, agentId: string, key: string, message = 'file claim 77') =>
  t.request('POST', `/agents/${agentId}/invoke`, { body: { source: 'Api', message, correlation_id: `c-${key}`, idempotency_key: key } });

async function executions(t: PlatformTestApi, agentId: string): Promise<number> {
  return (await t.deps.agentStats.read(agentId)).invocation_metrics.total_count;
}

describe('idempotency keys on invoke', () => {
  it('answers a repeat with 200 DuplicateInvocation holding the recorded result, without running again', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const first = await invoke(api, agent.id, 'k-1');
    expect(first.status).toBe(200);
    const repeat = await invoke(api, agent.id, 'k-1', 'a different message');
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
