import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runToolLoop, type ToolBinding } from '@agent-platform/domain';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import { createOpenAiProvider } from './openai-provider.ts';

let fake: FakeOpenAiServer;
beforeEach(async () => {
  fake = await startFakeOpenAiServer({ api_key: 'sk-loop' });
});
afterEach(async () => {
  await fake.close();
});

const claimTool: ToolBinding = {
  skill_id: 'claims-skill',
  spec: {
    name: 'lookup_claim',
    description: 'Reads a claim by id',
    input_schema: { type: 'object', properties: { claim_id: { type: 'integer' } }, required: ['claim_id'] },
  },
  execute: async (args) => JSON.stringify({ claim_id: args.claim_id, status: 'approved' }),
};

describe('the tool loop over the OpenAI protocol', () => {
  it.each([
    ['one-piece replies', false],
    ['streamed replies', true],
  ])('offers tools, runs the scripted call, sends its result back and returns the final answer (%s)', async (_name, stream) => {
    fake.script(
      { tool_calls: [{ id: 'call_1', name: 'lookup_claim', arguments: { claim_id: 7 } }], usage: { prompt_tokens: 50, completion_tokens: 12 } },
      { text: 'Claim 7 is approved.', usage: { prompt_tokens: 80, completion_tokens: 6 } },
    );
    const provider = createOpenAiProvider({ id: 'oa', base_url: fake.url, apiKey: () => 'sk-loop' });
    const tokens: string[] = [];

    const result = await runToolLoop({
      provider,
      request: { model: 'gpt-test', messages: [{ role: 'user', content: 'Is claim 7 approved?' }] },
      tools: [claimTool],
      ...(stream ? { onToken: (t: string) => tokens.push(t) } : {}),
    });

    expect(result).toMatchObject({
      content: 'Claim 7 is approved.',
      tool_calls: [{ tool_name: 'lookup_claim', skill_id: 'claims-skill', success: true }],
      tokens_used: 50 + 12 + 80 + 6,
      stop_reason: 'complete',
    });
    expect(result.tool_calls[0]?.duration_ms).toBeGreaterThanOrEqual(0);
    if (stream) expect(tokens.join('')).toBe('Claim 7 is approved.');
    const [first, second] = fake.requests;
    expect(first?.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'lookup_claim', description: 'Reads a claim by id', parameters: claimTool.spec.input_schema },
      },
    ]);
    expect(second?.body.messages).toEqual([
      { role: 'user', content: 'Is claim 7 approved?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_claim', arguments: '{"claim_id":7}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"claim_id":7,"status":"approved"}' },
    ]);
  });

  it('is bounded by maxRounds against a model that never stops calling tools', async () => {
    const server = await startFakeOpenAiServer({ fallback: () => ({ tool_calls: [{ name: 'lookup_claim', arguments: { claim_id: 1 } }] }) });
    try {
      const result = await runToolLoop({
        provider: createOpenAiProvider({ id: 'oa', base_url: server.url }),
        request: { model: 'gpt-test', messages: [{ role: 'user', content: 'loop' }] },
        tools: [claimTool],
        maxRounds: 4,
      });
      expect(server.requests).toHaveLength(4);
      expect(result.stop_reason).toBe('max_rounds');
      expect(result.tool_calls).toHaveLength(3);
    } finally {
      await server.close();
    }
  });
});
