import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '@agent-platform/config';
import type { PlatformConfig } from '@agent-platform/contracts';
import { PlatformError } from '@agent-platform/domain';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import { createProviders } from './create-providers.ts';

let fake: FakeOpenAiServer;
beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});
afterEach(async () => {
  await fake.close();
});

function config(patch: Partial<PlatformConfig> = {}): PlatformConfig {
  return {
    ...defaultConfig(),
    providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, api_key_env: 'OA_KEY', models: ['gpt-a', 'gpt-b'] }],
    models: { default: 'oa/gpt-b' },
    ...patch,
  };
}

const hello = { messages: [{ role: 'user' as const, content: 'hi' }] };

describe('createProviders', () => {
  it('always has the local provider, plus the configured ones and the default model', () => {
    const registry = createProviders(config(), { env: {} });
    expect(registry.providers()).toEqual([
      { id: 'local', kind: 'local', models: ['echo'] },
      { id: 'oa', kind: 'openai', models: ['gpt-a', 'gpt-b'], base_url: fake.url },
    ]);
    expect(registry.defaultKey()).toBe('oa/gpt-b');
    expect(createProviders(defaultConfig(), { env: {} }).resolve().key).toBe('local/echo');
  });

  it('reads the API key from the environment at call time, the secret hook first', async () => {
    const env: Record<string, string | undefined> = {};
    const vault = new Map<string, string>();
    const registry = createProviders(config(), { env, resolveSecret: (name) => vault.get(name) });
    fake.script({ text: '1' }, { text: '2' });
    const { provider, model } = registry.resolve();

    const missing = await provider.complete({ model, ...hello }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(PlatformError);
    expect((missing as PlatformError).message).toBe("provider 'oa': no API key: the environment variable OA_KEY (api_key_env) is not set");
    expect(fake.requests).toHaveLength(0);

    env.OA_KEY = 'sk-from-env';
    await provider.complete({ model, ...hello });
    vault.set('OA_KEY', 'sk-from-vault');
    await provider.complete({ model, ...hello });
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-from-env', 'Bearer sk-from-vault']);
    expect(fake.requests.map((r) => r.body.model)).toEqual(['gpt-b', 'gpt-b']);
  });

  it('applies [model_calls] timeouts and retries', async () => {
    const sleeps: number[] = [];
    const registry = createProviders(
      config({
        model_calls: {
          request_timeout_secs: 600,
          connect_timeout_secs: 30,
          llm_retry_max_attempts: 2,
          llm_retry_base_delay_ms: 250,
          llm_retry_max_delay_ms: 1000,
          llm_retry_max_total_secs: 60,
        },
      }),
      { env: { OA_KEY: 'k' }, http: { sleep: async (ms) => void sleeps.push(ms), random: () => 1 } },
    );
    fake.script({ status: 503 }, { status: 503 }, { text: 'not reached' });
    const { provider, model } = registry.resolve('oa/gpt-a');
    const error = await provider.complete({ model, ...hello }).catch((e: unknown) => e);
    expect((error as PlatformError).details).toMatchObject({ upstream_status: 503, attempts: 2 });
    expect(sleeps).toEqual([250]);
  });

  it('follows the running config when given a getter', () => {
    let current = config();
    const registry = createProviders(() => current, { env: {} });
    expect(registry.models().map((m) => m.key)).toEqual(['local/echo', 'oa/gpt-a', 'oa/gpt-b']);
    current = { ...defaultConfig() };
    expect(registry.models().map((m) => m.key)).toEqual(['local/echo']);
    expect(registry.defaultKey()).toBe('local/echo');
  });
});
