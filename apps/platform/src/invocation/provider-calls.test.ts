import type { PlatformConfig } from '@agent-platform/contracts';
import type { DeepPartial } from '@agent-platform/api/testing';
import { startFakeOpenAiServer, waitUntil, type FakeOpenAiServer } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Invocations through an `openai` provider (a local server speaking the protocol, STYLE §5):
// tokens and cost from the provider's usage, retries, failures, timeouts, session context, abort.
let api: PlatformTestApi | null = null;
let fake: FakeOpenAiServer;

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});
afterEach(async () => {
  await api?.close();
  api = null;
  await fake.close();
});

function config(modelCalls: DeepPartial<PlatformConfig['model_calls']> = {}): DeepPartial<PlatformConfig> {
  return {
    providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, models: ['gpt-test'], input_usd_per_mtok: 2, output_usd_per_mtok: 8 }],
    models: { default: 'oa/gpt-test' },
    model_calls: { llm_retry_max_attempts: 2, llm_retry_base_delay_ms: 1, llm_retry_max_delay_ms: 5, ...modelCalls },
  };
}

const send = (t: PlatformTestApi, agentId: string, message: string) => t.request('POST', `/agents/${agentId}/send`, { body: { message } });

describe('send through an openai provider', () => {
  it("counts the provider's tokens and prices them in /usage", async () => {
    api = await startPlatformTestApi({ config: config() });
    const agent = await insertAgent(api);
    fake.script({ text: 'Your claim is registered.', usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const res = await send(api, agent.id, 'I had an accident');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ content: 'Your claim is registered.', tool_calls: [], tokens_used: 1500 });
    expect(fake.requests[0]?.body.model).toBe('gpt-test');
    // 1000 * 2 / 1e6 + 500 * 8 / 1e6
    expect((await api.request('GET', '/usage')).body).toEqual({ total_input_tokens: 1000, total_output_tokens: 500, total_requests: 1, total_cost_usd: 0.006 });
  });

  it('waits out a 429 for at least its retry-after, then answers', async () => {
    api = await startPlatformTestApi({ config: config() });
    const agent = await insertAgent(api);
    fake.script({ status: 429, headers: { 'retry-after': '1' }, message: 'slow down' }, { text: 'ok now' });
    const started = Date.now();
    const res = await send(api, agent.id, 'hello');
    expect(res.status).toBe(200);
    expect(res.body.content).toBe('ok now');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(fake.requests).toHaveLength(2);
  });

  it('answers 502 ProviderError once the retries failed, and counts nothing', async () => {
    api = await startPlatformTestApi({ config: config() });
    const agent = await insertAgent(api);
    fake.script({ status: 500, message: 'upstream broke' }, { status: 500, message: 'upstream broke' });
    const res = await send(api, agent.id, 'hello');
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ category: 'ProviderError', message: expect.stringContaining("provider 'oa'") });
    expect(fake.requests).toHaveLength(2);
    expect((await api.request('GET', '/usage/summary')).body.requests).toBe(0);
    expect((await api.deps.agentStats.read(agent.id)).invocation_metrics).toMatchObject({ total_count: 1, error_count: 1 });
  });

  it('answers Timeout when the provider is too slow', async () => {
    api = await startPlatformTestApi({ config: config({ request_timeout_secs: 1, llm_retry_max_attempts: 1 }) });
    const agent = await insertAgent(api);
    fake.script({ text: 'too late', delay_ms: 5_000 });
    const res = await send(api, agent.id, 'hello');
    expect(res.status).toBe(500);
    expect(res.body.error.category).toBe('Timeout');
  });

  it('gives the model the system prompt first, then the session so far, then the message', async () => {
    api = await startPlatformTestApi({ config: config() });
    const agent = await insertAgent(api, { prompt: 'You are the claims intake assistant.' });
    fake.script({ text: 'What is your policy number?' }, { text: 'Thanks, noted.' });
    await send(api, agent.id, 'I want to report a loss');
    await send(api, agent.id, 'Policy P-123');
    expect(fake.requests[1]?.body.messages).toEqual([
      { role: 'system', content: 'You are the claims intake assistant.' },
      { role: 'user', content: 'I want to report a loss' },
      { role: 'assistant', content: 'What is your policy number?' },
      { role: 'user', content: 'Policy P-123' },
    ]);
  });

  it('keeps only [agents] session_max_turns turns of context', async () => {
    api = await startPlatformTestApi({ config: { ...config(), agents: { session_max_turns: 2 } } });
    const agent = await insertAgent(api, { prompt: '' });
    fake.script({ text: 'a1' }, { text: 'a2' }, { text: 'a3' });
    for (const message of ['q1', 'q2', 'q3']) await send(api, agent.id, message);
    expect(fake.requests[2]?.body.messages).toEqual([
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: 'a2' },
      { role: 'user', content: 'q3' },
    ]);
  });

  it('aborts an in-flight invocation promptly when the agent is suspended', async () => {
    api = await startPlatformTestApi({ config: config() });
    const agent = await insertAgent(api);
    fake.script({ text: 'never seen', delay_ms: 20_000 });
    const t = api;
    const pending = send(t, agent.id, 'take your time');
    await waitUntil(() => fake.requests.length === 1, { message: 'the provider call' });
    const started = Date.now();
    expect((await t.request('POST', `/agents/${agent.id}/suspend`)).status).toBe(200);
    const res = await pending;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ category: 'InvalidState', message: expect.stringContaining('suspended'), details: { state: 'Suspended' } });
  });
});
