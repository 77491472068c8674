import { describe, expect, it } from 'vitest';
import { PlatformError } from '../errors/platform-error.ts';
import type { ModelProvider } from './model-provider.ts';
import { createModelRegistry, parseModelKey } from './model-registry.ts';

function provider(id: string, models: string[], base_url?: string): ModelProvider {
  return {
    id,
    kind: id === 'local' ? 'local' : 'openai',
    models: () => models,
    ...(base_url === undefined ? {} : { base_url }),
    complete: async () => ({ content: '', tool_calls: [], usage: { input_tokens: 0, output_tokens: 0 }, finish_reason: 'stop' }),
  };
}

describe('parseModelKey', () => {
  it.each([
    ['local/echo', { provider: 'local', model: 'echo' }],
    ['vllm/meta-llama/Llama-3.1-8B', { provider: 'vllm', model: 'meta-llama/Llama-3.1-8B' }],
    ['ollama/llama3:8b', { provider: 'ollama', model: 'llama3:8b' }],
    ['echo', null],
    ['/echo', null],
    ['local/', null],
  ])('%s', (key, expected) => {
    expect(parseModelKey(key)).toEqual(expected);
  });
});

describe('createModelRegistry', () => {
  const registry = createModelRegistry({
    providers: [provider('local', ['echo']), provider('oa', ['gpt-a', 'gpt-b'], 'http://h/v1'), provider('ollama', [])],
    defaultKey: 'oa/gpt-b',
  });

  it('lists providers and their models', () => {
    expect(registry.providers()).toEqual([
      { id: 'local', kind: 'local', models: ['echo'] },
      { id: 'oa', kind: 'openai', models: ['gpt-a', 'gpt-b'], base_url: 'http://h/v1' },
      { id: 'ollama', kind: 'openai', models: [] },
    ]);
    expect(registry.models()).toEqual([
      { key: 'local/echo', provider: 'local', model: 'echo', default: false },
      { key: 'oa/gpt-a', provider: 'oa', model: 'gpt-a', default: false },
      { key: 'oa/gpt-b', provider: 'oa', model: 'gpt-b', default: true },
    ]);
  });

  it('resolves the default, a listed model, and any model of a provider that lists none', () => {
    expect(registry.resolve()).toMatchObject({ key: 'oa/gpt-b', model: 'gpt-b', provider: { id: 'oa' } });
    expect(registry.resolve('local/echo').provider.id).toBe('local');
    expect(registry.resolve('ollama/llama3:8b')).toMatchObject({ model: 'llama3:8b', provider: { id: 'ollama' } });
  });

  it.each(['oa/gpt-z', 'nobody/echo', 'echo'])('refuses %s with NotFound', (key) => {
    expect(registry.model(key)).toBeUndefined();
    const error = (() => {
      try {
        registry.resolve(key);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).category).toBe('NotFound');
    expect((error as PlatformError).message).toBe(`model '${key}' not found`);
  });

  it('lists a default whose provider lists no models', () => {
    const open = createModelRegistry({ providers: [provider('local', ['echo']), provider('ollama', [])], defaultKey: 'ollama/qwen2' });
    expect(open.models().map((m) => [m.key, m.default])).toEqual([
      ['local/echo', false],
      ['ollama/qwen2', true],
    ]);
  });
});
