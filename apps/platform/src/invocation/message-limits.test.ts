import type { PlatformConfig } from '@agent-platform/contracts';
import type { DeepPartial } from '@agent-platform/api/testing';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Issue "Hardening" 1: a message had no maximum length and the canonical session grew without
// bound (ten 9 MB sends made a 188 MB session, re-sent whole to the model on every call).
let api: PlatformTestApi | null = null;
let fake: FakeOpenAiServer;

beforeEach(async () => {
  fake = await startFakeOpenAiServer({ fallback: (request) => ({ text: `re: ${lastUser(request.body)}` }) });
});
afterEach(async () => {
  await api?.close();
  api = null;
  await fake.close();
});

function lastUser(body: { messages?: Array<{ role: string; content: string }> } | undefined): string {
  return body?.messages?.filter((m) => m.role === 'user').at(-1)?.content ?? '';
}

function config(agents: DeepPartial<PlatformConfig['agents']> = {}): DeepPartial<PlatformConfig> {
  return {
    providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, models: ['m'] }],
    models: { default: 'oa/m' },
    agents,
  };
}

const utf8 = (text: string): number => Buffer.byteLength(text);

describe('[agents] max_message_bytes', () => {
  it('refuses a longer message on send, invoke and chat completions with 413 SizeLimitExceeded, running nothing', async () => {
    api = await startPlatformTestApi({ config: config({ max_message_bytes: 1000 }) });
    const agent = await insertAgent(api);
    // 501 characters, 1002 bytes: the limit counts UTF-8 bytes, not characters.
    const long = 'é'.repeat(501);
    const atLimit = 'é'.repeat(500);
    const attempts = [
      api.request('POST', `/agents/${agent.id}/send`, { body: { message: long } }),
      api.request('POST', `/agents/${agent.id}/invoke`, { body: { source: 'Api', message: long, correlation_id: 'c-1' } }),
      api.request('POST', '/chat/completions', { body: { model: agent.name, messages: [{ role: 'user', content: long }] } }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(413);
      expect(res.body.error).toMatchObject({
        category: 'SizeLimitExceeded',
        message: expect.stringContaining('max_message_bytes'),
        details: { bytes: 1002, limit_bytes: 1000 },
      });
    }
    expect(fake.requests).toHaveLength(0);
    expect(await api.deps.sessions.history(agent.id)).toEqual([]);
    expect((await api.deps.agentStats.read(agent.id)).tasks_received).toBe(0);

    const ok = await api.request('POST', `/agents/${agent.id}/send`, { body: { message: atLimit } });
    expect(ok.status).toBe(200);
    expect(ok.body.content).toBe(`re: ${atLimit}`);
  });

  it('has a documented default of 262144 bytes', async () => {
    api = await startPlatformTestApi({ config: config() });
    const agent = await insertAgent(api);
    const over = await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'x'.repeat(262_145) } });
    expect(over.status).toBe(413);
    expect(over.body.error.details).toMatchObject({ limit_bytes: 262_144 });
    expect((await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'x'.repeat(262_144) } })).status).toBe(200);
  });
});

describe('[agents] session_max_bytes', () => {
  it('keeps the canonical session, and what the model is sent, within the byte limit, newest turns first', async () => {
    api = await startPlatformTestApi({ config: config({ session_max_bytes: 2_000, session_max_turns: 1_000 }) });
    const agent = await insertAgent(api, { prompt: '' });
    const messages = Array.from({ length: 8 }, (_, i) => `${i}`.repeat(300));
    for (const message of messages) expect((await api.request('POST', `/agents/${agent.id}/send`, { body: { message } })).status).toBe(200);

    const history = await api.deps.sessions.history(agent.id);
    const bytes = history.reduce((sum, turn) => sum + utf8(turn.content), 0);
    expect(bytes).toBeLessThanOrEqual(2_000);
    // Whole turns are dropped, oldest first: the newest question and its answer are always kept.
    expect(history.at(-2)?.content).toBe(messages[7]);
    expect(history.at(-1)?.content).toBe(`re: ${messages[7]}`);
    expect(history.length).toBeGreaterThanOrEqual(4);

    const sentLast = fake.requests.at(-1)?.body.messages as Array<{ role: string; content: string }>;
    const context = sentLast.slice(0, -1);
    expect(context.reduce((sum, m) => sum + utf8(m.content), 0)).toBeLessThanOrEqual(2_000);
    expect(sentLast.at(-1)).toEqual({ role: 'user', content: messages[7] });
  });

  it('drops a turn larger than the whole limit instead of keeping an oversized session', async () => {
    api = await startPlatformTestApi({ config: config({ session_max_bytes: 500, max_message_bytes: 10_000 }) });
    const agent = await insertAgent(api, { prompt: '' });
    await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'small' } });
    await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'y'.repeat(5_000) } });
    const history = await api.deps.sessions.history(agent.id);
    expect(history.reduce((sum, turn) => sum + utf8(turn.content), 0)).toBeLessThanOrEqual(500);
  });
});
