import { readFile, writeFile } from 'node:fs/promises';
import { startFakeOpenAiServer, waitUntil, type FakeOpenAiServer } from '@agent-platform/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// [agents] worker_concurrency through the real invocation service (docs/invocation.md "Worker
// concurrency"): the wait for a slot counts within the invocation timeout, from arrival.
let api: PlatformTestApi | null = null;
let fake: FakeOpenAiServer | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
  await fake?.close();
  fake = null;
});

describe('worker slots', () => {
  it('answers Timeout to an invocation that waited out invocation_timeout_secs for a slot, and never calls the model', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const model = await startFakeOpenAiServer({ fallback: (request) => ({ text: String(request.body?.messages?.at(-1)?.content), hold: held }) });
    fake = model;
    api = await startPlatformTestApi({
      config: {
        providers: [{ id: 'oa', kind: 'openai', base_url: model.url, models: ['m'] }],
        models: { default: 'oa/m' },
        agents: { worker_concurrency: 1, invocation_timeout_secs: 30 },
      },
    });
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
    release();
    expect((await first).body).toMatchObject({ content: 'long one' });
    expect(model.requests.map((r) => r.body.messages.at(-1).content)).toEqual(['long one']);
    // The queued one never ran: it is not counted as received.
    expect((await t.deps.agentStats.read(agent.id)).tasks_received).toBe(1);
  });
});
