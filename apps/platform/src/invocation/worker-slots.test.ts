import { readFile, writeFile } from 'node:fs/promises';
import { waitUntil } from '@agent-platform/testkit';
import { startHeldModel, type HeldModel } from '../testing/held-model.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// [agents] worker_concurrency through the real invocation service (docs/invocation.md "Worker
// concurrency"): the wait for a slot counts within the invocation timeout, from arrival.
let api: PlatformTestApi | null = null;
let held: HeldModel | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
  await held?.close();
  held = null;
});

describe('worker slots', () => {
  it('answers Timeout to an invocation that waited out invocation_timeout_secs for a slot, and never calls the model', async () => {
    held = await startHeldModel();
    const model = held.server;
    api = await startPlatformTestApi({ config: { ...held.config, agents: { worker_concurrency: 1, invocation_timeout_secs: 30 } } });
    const agent = await insertAgent(api);
    const t = api;
    const first = t.request('POST', `/agents/${agent.id}/send`, { body: { message: 'long one' } });
    await waitUntil(() => model.requests.length === 1, { message: 'the first call reaching the model' });
    // The timeout is read per invocation: the queued one gets 1 s, the running one keeps its 30 s.
    const text = await readFile(t.configPath, 'utf8');
    await writeFile(t.configPath, text.replace(/invocation_timeout_secs = 30/, 'invocation_timeout_secs = 1'));
    expect((await t.request('POST', '/config/reload')).status).toBe(200);
    const queued = await t.request('POST', `/agents/${agent.id}/send`, { body: { message: 'queued' } });
    expect(queued.status).toBe(500);
    expect(queued.body.error).toMatchObject({ category: 'Timeout', message: expect.stringMatching(/waiting for a free slot.*worker_concurrency/) });
    held.release();
    expect((await first).body).toMatchObject({ content: 'long one' });
    expect(model.requests.map((r) => r.body.messages.at(-1).content)).toEqual(['long one']);
    // The queued one never ran: it is not counted as received.
    expect((await t.deps.agentStats.read(agent.id)).tasks_received).toBe(1);
  });
});
