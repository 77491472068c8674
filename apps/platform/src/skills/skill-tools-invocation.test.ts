import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePackage } from '@agent-platform/domain/testing';
import { requireStarlarkRunner } from '@agent-platform/starlark/testing';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Starlark skill tools in an agent's invocation (docs/skills.md "Tools in the tool loop",
// docs/tools.md): a competency lists a bundled starlark skill, the agent's allow_skill_tools
// decides, the model (an OpenAI-protocol stand-in) calls the tool, the reply shows the call.
const interpreter = requireStarlarkRunner('the starlark tool-call invocation tests');
afterAll(async () => interpreter?.close());

let api: PlatformTestApi;
let fake: FakeOpenAiServer;
let root: string;

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
  root = await mkdtemp(join(tmpdir(), 'ap-skill-tools-'));
  api = await startPlatformTestApi({
    config: { providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, models: ['gpt-test'] }], models: { default: 'oa/gpt-test' } },
  });
  const competency = await writePackage(root, { type: 'competency', name: 'payouts', skills: ['premium-calc'], body: 'Explain payouts.' });
  expect((await api.request('POST', '/catalog/install', { body: { path: competency } })).status).toBe(201);
});
afterEach(async () => {
  await api.close();
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

const PAYOUT_CALL = { tool_calls: [{ id: 'c1', name: 'claim_payout', arguments: { loss: 8000, deductible: 500, limit: 5000 } }] };

describe.skipIf(interpreter === null)('starlark skill tools in an invocation', () => {
  it('are offered to an agent allowed them, run, and show in tool_calls; the model gets the JSON result', async () => {
    const agent = await insertAgent(api, { equipped_competencies: ['payouts'], allow_skill_tools: ['premium-calc/*'] });
    fake.script(PAYOUT_CALL, { text: 'We pay 5000.' });
    const res = await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'A 8000 loss?' } });
    expect(res.status).toBe(200);
    expect(res.body.content).toBe('We pay 5000.');
    expect(res.body.tool_calls).toEqual([{ tool_name: 'claim_payout', skill_id: 'premium-calc', duration_ms: expect.any(Number), success: true }]);
    expect(fake.requests[0]?.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['prorate_premium', 'claim_payout']);
    const toolMessage = fake.requests[1]?.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(JSON.parse(toolMessage.content)).toEqual({ payable: 5000, retained_by_insured: 3000, capped_at_limit: true });
  });

  it('are refused to an agent whose allow_skill_tools does not name them, as a failed call the model sees', async () => {
    const agent = await insertAgent(api, { equipped_competencies: ['payouts'], allow_skill_tools: [] });
    fake.script(PAYOUT_CALL, { text: 'I cannot compute that.' });
    const res = await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'A 8000 loss?' } });
    expect(res.status).toBe(200);
    expect(res.body.tool_calls).toEqual([{ tool_name: 'claim_payout', skill_id: 'premium-calc', duration_ms: expect.any(Number), success: false }]);
    const toolMessage = fake.requests[1]?.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(toolMessage.content).toContain("may not use tool 'claim_payout' of 'premium-calc'");
  });
});
