import { describe, expect, it } from 'vitest';
import { fixedClock } from '../time/clock.ts';
import type { CompletionRequest, CompletionResult, ModelProvider } from './model-provider.ts';
import { runToolLoop, type ToolBinding } from './tool-loop.ts';

/** A provider answering from a script, recording each request it got (a copy, as the wire would). */
function scripted(...replies: Array<Partial<CompletionResult>>): ModelProvider & { seen: CompletionRequest[] } {
  const seen: CompletionRequest[] = [];
  return {
    id: 'scripted',
    kind: 'openai',
    models: () => ['m'],
    seen,
    complete: async (request, options) => {
      seen.push(structuredClone(request));
      const reply = replies.shift();
      if (reply === undefined) throw new Error('script exhausted');
      if (reply.content) options?.onToken?.(reply.content);
      return { content: '', tool_calls: [], usage: { input_tokens: 10, output_tokens: 5 }, finish_reason: 'stop', ...reply };
    },
  };
}

const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });

function tool(name: string, run: (args: Record<string, unknown>) => Promise<string>, skill_id = `skill-${name}`): ToolBinding {
  return { skill_id, spec: { name, description: `the ${name} tool`, input_schema: { type: 'object' } }, execute: run };
}

const request: CompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'weather in Paris?' }] };

describe('runToolLoop', () => {
  it('runs the requested tool, feeds the result back and returns the final answer', async () => {
    const provider = scripted(
      { content: '', tool_calls: [call('c1', 'weather', { city: 'Paris' })], finish_reason: 'tool_calls' },
      { content: 'Sunny, 21 C', usage: { input_tokens: 30, output_tokens: 4 } },
    );
    const clock = fixedClock('2025-01-01T00:00:00Z');
    const got: unknown[] = [];
    const weather = tool('weather', async (args) => {
      got.push(args);
      clock.advance(42);
      return '{"sky":"sunny","temp_c":21}';
    });

    const result = await runToolLoop({ provider, request, tools: [weather], clock });

    expect(result).toMatchObject({
      content: 'Sunny, 21 C',
      tool_calls: [{ tool_name: 'weather', skill_id: 'skill-weather', duration_ms: 42, success: true }],
      tokens_used: 10 + 5 + 30 + 4,
      usage: { input_tokens: 40, output_tokens: 9 },
      rounds: 2,
      stop_reason: 'complete',
    });
    expect(got).toEqual([{ city: 'Paris' }]);
    expect(provider.seen[0]?.tools).toEqual([weather.spec]);
    expect(provider.seen[1]?.messages.slice(1)).toEqual([
      { role: 'assistant', content: '', tool_calls: [call('c1', 'weather', { city: 'Paris' })] },
      { role: 'tool', tool_call_id: 'c1', content: '{"sky":"sunny","temp_c":21}' },
    ]);
    // The caller's conversation is not mutated.
    expect(request.messages).toHaveLength(1);
  });

  it('answers unknown tools, bad arguments and failing tools to the model, marked unsuccessful', async () => {
    const provider = scripted(
      {
        tool_calls: [call('a', 'nope', {}), call('b', 'lookup', '{not json'), call('c', 'lookup', '[1]'), call('d', 'broken', {}), call('e', 'lookup', '')],
      },
      { content: 'done' },
    );
    const lookup = tool('lookup', async (args) => `looked up ${JSON.stringify(args)}`);
    const broken = tool('broken', async () => {
      throw new Error('crm is down');
    });

    const result = await runToolLoop({ provider, request, tools: [lookup, broken] });

    expect(result.tool_calls.map((t) => [t.tool_name, t.skill_id, t.success])).toEqual([
      ['nope', '', false],
      ['lookup', 'skill-lookup', false],
      ['lookup', 'skill-lookup', false],
      ['broken', 'skill-broken', false],
      ['lookup', 'skill-lookup', true],
    ]);
    const toolMessages = provider.seen[1]!.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]);
    expect(toolMessages).toEqual([
      ['a', "error: unknown tool 'nope'; available tools: lookup, broken"],
      ['b', "error: the arguments of 'lookup' are not a JSON object"],
      ['c', "error: the arguments of 'lookup' are not a JSON object"],
      ['d', "error: tool 'broken' failed: crm is down"],
      ['e', 'looked up {}'],
    ]);
    expect(result.content).toBe('done');
  });

  it('stops after maxRounds model calls without running the last requested tools', async () => {
    const runs: string[] = [];
    const loop = tool('loop', async () => {
      runs.push('ran');
      return 'again';
    });
    const provider = scripted(
      { tool_calls: [call('1', 'loop', {})] },
      { tool_calls: [call('2', 'loop', {})] },
      { content: 'partial thoughts', tool_calls: [call('3', 'loop', {})] },
      { content: 'never reached' },
    );

    const result = await runToolLoop({ provider, request, tools: [loop], maxRounds: 3 });

    expect(provider.seen).toHaveLength(3);
    expect(runs).toHaveLength(2);
    expect(result).toMatchObject({ stop_reason: 'max_rounds', rounds: 3, content: 'partial thoughts', tokens_used: 45 });
    expect(result.tool_calls).toHaveLength(2);
  });

  it('says why it stopped when the last reply had no text', async () => {
    const provider = scripted({ tool_calls: [call('1', 'loop', {})] });
    const result = await runToolLoop({ provider, request, tools: [tool('loop', async () => 'x')], maxRounds: 1 });
    expect(result.content).toBe('[stopped after 1 model calls: the model was still asking for tools]');
    expect(result.tool_calls).toEqual([]);
  });

  it('makes one call and offers no tools when none are bound', async () => {
    const provider = scripted({ content: 'plain' });
    const tokens: string[] = [];
    const result = await runToolLoop({ provider, request, onToken: (t) => tokens.push(t) });
    expect(result).toMatchObject({ content: 'plain', tool_calls: [], rounds: 1, tokens_used: 15 });
    expect(provider.seen[0]).not.toHaveProperty('tools');
    expect(tokens).toEqual(['plain']);
  });

  it('propagates an abort raised while a tool runs instead of reporting it to the model', async () => {
    const controller = new AbortController();
    const provider = scripted({ tool_calls: [call('1', 'slow', {})] }, { content: 'never' });
    const slow = tool('slow', async () => {
      controller.abort(new Error('caller went away'));
      throw new Error('aborted');
    });
    await expect(runToolLoop({ provider, request, tools: [slow], signal: controller.signal })).rejects.toThrow('caller went away');
    expect(provider.seen).toHaveLength(1);
  });
});
