import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformError, type CompletionRequest, type ModelProvider } from '@agent-platform/domain';
import { startFakeOpenAiServer, waitUntil, type FakeOpenAiServer } from '@agent-platform/testkit';
import { createOpenAiProvider, type OpenAiProviderOptions, type RetryEvent } from './openai-provider.ts';

const KEY = 'sk-test-CANARY-7c1f9e';
const ask: CompletionRequest = { model: 'gpt-test', messages: [{ role: 'system', content: 'terse' }, { role: 'user', content: 'Status of claim 7?' }] };

let fake: FakeOpenAiServer;
beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});
afterEach(async () => {
  await fake.close();
});

/** Virtual time: sleeps return at once, record their length and move the clock the budget reads. */
function virtualTime(): Pick<OpenAiProviderOptions, 'sleep' | 'now'> & { sleeps: number[] } {
  let t = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => t,
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
  };
}

function provider(overrides: Partial<OpenAiProviderOptions> = {}): ModelProvider {
  return createOpenAiProvider({ id: 'fake', base_url: fake.url, models: ['gpt-test'], apiKey: () => KEY, random: () => 0, ...virtualTime(), ...overrides });
}

async function failure(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatformError);
  return error as PlatformError;
}

async function closedLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('openai provider: replies', () => {
  it('sends the chat-completions request and returns content and usage', async () => {
    fake.script({ text: 'Claim 7 is approved.', usage: { prompt_tokens: 21, completion_tokens: 6 } });
    const result = await provider().complete(ask);
    expect(result).toEqual({ content: 'Claim 7 is approved.', tool_calls: [], usage: { input_tokens: 21, output_tokens: 6 }, finish_reason: 'stop' });
    const [sent] = fake.requests;
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body).toEqual({ model: 'gpt-test', messages: [{ role: 'system', content: 'terse' }, { role: 'user', content: 'Status of claim 7?' }] });
  });

  it('sends no Authorization header for a provider without a key (Ollama, llama.cpp)', async () => {
    fake.script({ text: 'ok' });
    await createOpenAiProvider({ id: 'ollama', base_url: `${fake.url}/` }).complete(ask);
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
    expect(fake.requests[0]?.path).toBe('/v1/chat/completions');
  });

  it('streams tokens in order and takes the usage from the final chunk', async () => {
    fake.script({ text: 'Claim 7 is approved.', chunks: ['Claim', ' 7', ' is', ' approved.'], usage: { prompt_tokens: 30, completion_tokens: 5 } });
    const tokens: string[] = [];
    const result = await provider().complete(ask, { onToken: (t) => tokens.push(t) });
    expect(tokens).toEqual(['Claim', ' 7', ' is', ' approved.']);
    expect(result).toMatchObject({ content: 'Claim 7 is approved.', usage: { input_tokens: 30, output_tokens: 5 }, finish_reason: 'stop' });
    expect(fake.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('assembles streamed tool calls from their deltas', async () => {
    fake.script({ tool_calls: [{ id: 'call_a', name: 'lookup_claim', arguments: { claim_id: 7 } }, { name: 'notify', arguments: { to: 'ops' } }] });
    const result = await provider().complete(ask, { onToken: () => undefined });
    expect(result.tool_calls).toEqual([
      { id: 'call_a', name: 'lookup_claim', arguments: '{"claim_id":7}' },
      { id: 'call_fake_1', name: 'notify', arguments: '{"to":"ops"}' },
    ]);
    expect(result.finish_reason).toBe('tool_calls');
  });

  it('refuses a malformed 2xx reply without retrying', async () => {
    fake.script({ status: 200, message: 'not a completion' });
    const error = await failure(provider().complete(ask));
    expect(error.category).toBe('ProviderError');
    expect(error.message).toContain('malformed reply');
    expect(fake.requests).toHaveLength(1);
  });
});

describe('openai provider: retries (spec §Limits)', () => {
  it('honours retry-after as a floor for the next wait, then succeeds', async () => {
    fake.script({ status: 429, headers: { 'retry-after': '3' } }, { status: 503, headers: { 'retry-after-ms': '2500' } }, { text: 'finally' });
    const time = virtualTime();
    const events: RetryEvent[] = [];
    const result = await provider({ ...time, retry: { base_delay_ms: 100 }, onRetry: (e) => events.push(e) }).complete(ask);
    expect(result.content).toBe('finally');
    expect(time.sleeps).toEqual([3000, 2500]);
    expect(events.map((e) => [e.attempt, e.upstream_status, e.delay_ms])).toEqual([
      [1, 429, 3000],
      [2, 503, 2500],
    ]);
    expect(fake.requests).toHaveLength(3);
  });

  it('backs off exponentially on 5xx, then fails with ProviderError carrying the upstream status', async () => {
    fake.script({ status: 500 }, { status: 502 }, { status: 529, message: 'overloaded' });
    const time = virtualTime();
    const error = await failure(provider({ ...time, random: () => 1, retry: { max_attempts: 3, base_delay_ms: 1000 } }).complete(ask));
    expect(error.category).toBe('ProviderError');
    expect(error.retryable).toBe(false);
    expect(error.details).toMatchObject({ provider: 'fake', upstream_status: 529, attempts: 3, upstream_message: 'overloaded' });
    expect(error.message).toBe("provider 'fake': answered HTTP 529 (3 attempts): overloaded");
    expect(time.sleeps).toEqual([1000, 2000]);
    expect(fake.requests).toHaveLength(3);
  });

  it('fails a 400 at once, with the upstream message', async () => {
    fake.script({ status: 400, message: "Invalid value for 'model'" }, { text: 'never sent' });
    const time = virtualTime();
    const error = await failure(provider(time).complete(ask));
    expect(error).toMatchObject({ category: 'ProviderError', details: { upstream_status: 400, attempts: 1 } });
    expect(error.message).toContain("Invalid value for 'model'");
    expect(time.sleeps).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('retries a dropped connection', async () => {
    fake.script({ drop: true }, { text: 'back' });
    expect((await provider().complete(ask)).content).toBe('back');
    expect(fake.requests).toHaveLength(2);
  });

  it('fails fast against a closed loopback port, after its retries', async () => {
    const port = await closedLoopbackPort();
    const time = virtualTime();
    const started = Date.now();
    const error = await failure(provider({ ...time, base_url: `http://127.0.0.1:${port}/v1`, retry: { max_attempts: 3 } }).complete(ask));
    expect(error.category).toBe('ProviderError');
    expect(error.message).toBe("provider 'fake': unreachable (ECONNREFUSED) (3 attempts)");
    expect(time.sleeps).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops retrying when the next wait would cross the total time budget', async () => {
    const fallbackServer = await startFakeOpenAiServer({ fallback: () => ({ status: 503 }) });
    try {
      const time = virtualTime();
      const retry = { max_attempts: 10, base_delay_ms: 4000, max_delay_ms: 60_000, max_total_ms: 10_000 };
      const error = await failure(provider({ ...time, base_url: fallbackServer.url, random: () => 1, retry }).complete(ask));
      // Waits of 4 s then 8 s: the second would end at 12 s > 10 s, so only 2 attempts are made.
      expect(time.sleeps).toEqual([4000]);
      expect(fallbackServer.requests).toHaveLength(2);
      expect(error.message).toBe("provider 'fake': answered HTTP 503 (2 attempts; retry time budget of 10 s reached): fake error 503");
    } finally {
      await fallbackServer.close();
    }
  });

  it('stops waiting at once when the caller aborts during a retry wait', async () => {
    fake.script({ status: 429, headers: { 'retry-after': '60' } });
    const controller = new AbortController();
    const call = createOpenAiProvider({ id: 'fake', base_url: fake.url }).complete(ask, { signal: controller.signal });
    await waitUntil(() => fake.requests.length === 1, { message: 'the first attempt' });
    const started = Date.now();
    controller.abort(new Error('client went away'));
    await expect(call).rejects.toThrow('client went away');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('openai provider: timeouts', () => {
  it('answers Timeout naming the provider when the reply headers are too slow, without retrying', async () => {
    fake.script({ text: 'late', delay_ms: 10_000 }, { text: 'never' });
    const started = Date.now();
    const error = await failure(provider({ request_timeout_ms: 200 }).complete(ask));
    expect(error.category).toBe('Timeout');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe("provider 'fake': no complete reply within 200 ms (request timeout)");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(fake.requests).toHaveLength(1);
  });

  it('cuts a stream that stalls mid-way, after delivering what arrived', async () => {
    fake.script({ text: 'first then nothing', pause_ms: 10_000 });
    const tokens: string[] = [];
    const error = await failure(provider({ request_timeout_ms: 300 }).complete(ask, { onToken: (t) => tokens.push(t) }));
    expect(error.category).toBe('Timeout');
    expect(tokens).toEqual(['first ']);
  });
});

describe('openai provider: the API key never leaks', () => {
  it('is absent from every error, even when the upstream quotes it back', async () => {
    const port = await closedLoopbackPort();
    fake.script(
      { status: 401, message: `Incorrect API key provided: ${KEY}` },
      { status: 200, message: `bad ${KEY}` },
      { text: 'slow', delay_ms: 10_000 },
    );
    const errors = [
      await failure(provider().complete(ask)),
      await failure(provider().complete(ask)),
      await failure(provider({ request_timeout_ms: 100 }).complete(ask)),
      await failure(provider({ base_url: `http://127.0.0.1:${port}/v1`, retry: { max_attempts: 2 } }).complete(ask)),
    ];
    expect(errors.map((e) => e.category)).toEqual(['ProviderError', 'ProviderError', 'Timeout', 'ProviderError']);
    expect(errors[0]?.message).toContain('Incorrect API key provided: [redacted]');
    for (const error of errors) {
      const everything = [error.message, JSON.stringify(error), JSON.stringify(error.details), String(error.stack), String(error.cause)].join('\n');
      expect(everything).not.toContain(KEY);
      expect(everything).not.toContain('Status of claim 7?');
    }
  });
});
