import { describe, expect, it } from 'vitest';
import { PlatformError, runToolLoop } from '@agent-platform/domain';
import { createLocalProvider } from './local-provider.ts';

const local = createLocalProvider();

describe('the local echo model (D6)', () => {
  it('replies with exactly the final user message and counts ceil(len/4) each way', async () => {
    const result = await local.complete({
      model: 'echo',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'Hello, world!' },
      ],
    });
    // 13 characters: ceil(13/4) = 4 in, 4 out.
    expect(result).toEqual({ content: 'Hello, world!', tool_calls: [], usage: { input_tokens: 4, output_tokens: 4 }, finish_reason: 'stop' });
  });

  it.each([
    ['', 0],
    ['abcd', 1],
    ['abcde', 2],
    ['héllo wörld', 3],
    // Code points, not UTF-16 units: 5 emoji are 5 characters, ceil(5/4) = 2.
    ['😀😀😀😀😀', 2],
  ])('token count of %j is %i each way', async (text, tokens) => {
    const { usage } = await local.complete({ model: 'echo', messages: [{ role: 'user', content: text }] });
    expect(usage).toEqual({ input_tokens: tokens, output_tokens: tokens });
  });

  it('streams the echo in word pieces that join to the reply', async () => {
    const pieces: string[] = [];
    const text = '  Claim 42 is\tapproved \n';
    const result = await local.complete({ model: 'echo', messages: [{ role: 'user', content: text }] }, { onToken: (t) => pieces.push(t) });
    expect(pieces).toEqual(['  Claim ', '42 ', 'is\t', 'approved \n']);
    expect(pieces.join('')).toBe(result.content);
  });

  it('calls no tools even when offered some, so the tool loop makes one call', async () => {
    const result = await runToolLoop({
      provider: local,
      request: { model: 'echo', messages: [{ role: 'user', content: 'use the tool' }] },
      tools: [{ skill_id: 's', spec: { name: 't', description: 'd', input_schema: {} }, execute: async () => 'x' }],
    });
    expect(result).toMatchObject({ content: 'use the tool', tool_calls: [], rounds: 1, tokens_used: 6 });
  });

  it('offers only the model echo', async () => {
    expect(local.models()).toEqual(['echo']);
    const error = await local.complete({ model: 'gpt', messages: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).category).toBe('NotFound');
  });
});

describe('the local model with delay_ms', () => {
  it('answers after the delay, and an abort ends the wait at once', async () => {
    const slow = createLocalProvider({ delayMs: 300 });
    const started = Date.now();
    const result = await slow.complete({ model: 'echo', messages: [{ role: 'user', content: 'later' }] });
    expect(result.content).toBe('later');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);

    const controller = new AbortController();
    const call = slow.complete({ model: 'echo', messages: [{ role: 'user', content: 'never' }] }, { signal: controller.signal });
    controller.abort(new Error('cancelled by the caller'));
    await expect(call).rejects.toThrow('cancelled by the caller');
  });
});
