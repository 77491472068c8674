import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import type { RoutePlugin } from '../api-app.ts';
import { startTestApi, type TestApi } from '../testing/index.ts';

const KEY = 'sk-routes-CANARY-51d2';

let fake: FakeOpenAiServer;
let api: TestApi | null = null;
beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});
afterEach(async () => {
  await api?.close();
  api = null;
  await fake.close();
});

/** Test-only: one model call through deps.models, so the HTTP mapping of provider errors shows. */
const completeRoute: RoutePlugin = (app, deps) => {
  app.post('/test/complete', { config: { action: 'AgentInvoke' }, schema: { response: { 200: {} } } }, async () => {
    const { provider, model } = deps.models.resolve();
    return provider.complete({ model, messages: [{ role: 'user', content: 'hello' }] });
  });
};

async function start(): Promise<TestApi> {
  api = await startTestApi({
    config: {
      auth: { mode: 'local' },
      providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, api_key_env: 'OA_KEY', models: ['gpt-a', 'meta-llama/Llama-3.1-8B'] }],
      models: { default: 'oa/gpt-a' },
      model_calls: { llm_retry_max_attempts: 1, request_timeout_secs: 1 },
    },
    env: { OA_KEY: KEY },
    routes: [completeRoute],
  });
  return api;
}

describe('model routes', () => {
  it('lists providers without keys or key variables', async () => {
    const t = await start();
    const res = await t.request('GET', '/providers', { token: await t.issueKey('viewer') });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      providers: [
        { id: 'local', kind: 'local', models: ['echo'] },
        { id: 'oa', kind: 'openai', models: ['gpt-a', 'meta-llama/Llama-3.1-8B'], base_url: fake.url },
      ],
    });
    expect(JSON.stringify(res.body)).not.toContain('OA_KEY');
    expect(JSON.stringify(res.body)).not.toContain(KEY);
  });

  it('lists models by key with the default marked', async () => {
    const t = await start();
    const res = await t.request('GET', '/models', { token: await t.issueKey('auditor') });
    expect(res.status).toBe(200);
    expect(res.body.models).toEqual([
      { key: 'local/echo', provider: 'local', model: 'echo', default: false },
      { key: 'oa/gpt-a', provider: 'oa', model: 'gpt-a', default: true },
      { key: 'oa/meta-llama/Llama-3.1-8B', provider: 'oa', model: 'meta-llama/Llama-3.1-8B', default: false },
    ]);
  });

  it.each([
    ['/models/local%2Fecho', 'local/echo'],
    ['/models/local/echo', 'local/echo'],
    ['/models/oa%2Fmeta-llama%2FLlama-3.1-8B', 'oa/meta-llama/Llama-3.1-8B'],
    ['/models/oa/meta-llama/Llama-3.1-8B', 'oa/meta-llama/Llama-3.1-8B'],
  ])('GET %s finds %s', async (path, key) => {
    const t = await start();
    const res = await t.request('GET', path, { token: await t.issueKey('developer') });
    expect(res.status).toBe(200);
    expect(res.body.key).toBe(key);
  });

  it.each(['/models/local%2Fgpt', '/models/nobody/echo', '/models/echo', '/models/local:echo'])('GET %s is 404 NotFound', async (path) => {
    const t = await start();
    const res = await t.request('GET', path, { token: await t.issueKey('admin') });
    expect(res.status).toBe(404);
    expect(res.body.error.category).toBe('NotFound');
  });

  it('needs ProviderRead: a service key is refused', async () => {
    const t = await start();
    const token = await t.issueKey('service');
    for (const path of ['/providers', '/models', '/models/local%2Fecho']) {
      const res = await t.request('GET', path, { token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.stringContaining('ProviderRead') });
    }
  });

  it('maps an upstream failure to 502 ProviderError and a slow provider to Timeout, never showing the key', async () => {
    const t = await start();
    const token = await t.issueKey('admin');
    fake.script({ text: 'fine', usage: { prompt_tokens: 3, completion_tokens: 1 } }, { status: 400, message: `bad key ${KEY}` });
    const ok = await t.request('POST', '/test/complete', { token, body: {} });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ content: 'fine', usage: { input_tokens: 3, output_tokens: 1 } });
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);

    const failed = await t.request('POST', '/test/complete', { token, body: {} });
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatchObject({ category: 'ProviderError', details: { provider: 'oa', upstream_status: 400 } });
    expect(JSON.stringify(failed.body)).not.toContain(KEY);

    // request_timeout_secs = 1: a reply whose headers take 5 s is cut off as Timeout (spec: 500).
    fake.script({ text: 'late', delay_ms: 5000 });
    const slow = await t.request('POST', '/test/complete', { token, body: {} });
    expect(slow.status).toBe(500);
    expect(slow.body.error).toMatchObject({ category: 'Timeout', message: "provider 'oa': no complete reply within 1 s (request timeout)" });
    expect(t.logs().join('\n')).not.toContain(KEY);
  });
});
