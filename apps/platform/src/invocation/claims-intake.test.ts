import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// From install to conversation: the example agent installed through the catalog, activated, and
// talked to; the model sees the agent's prompt followed by its competency's (equip order) and
// that competency's promptonly skill (docs/skills.md).
const EXAMPLE = fileURLToPath(new URL('../../../../examples/claims-intake', import.meta.url));
const COMPETENCY = fileURLToPath(new URL('../../../../examples/fnol-triage/payload/COMPETENCY.md', import.meta.url));
const SKILL = fileURLToPath(new URL('../../../../examples/loss-summary/payload/SKILL.md', import.meta.url));

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

const body = (markdown: string): string => markdown.replace(/^---\n[\s\S]*?\n---\n/, '').trim();

describe('the claims-intake example', () => {
  it('installs, answers with its composed system prompt, and can be suspended', async () => {
    api = await startPlatformTestApi({
      config: { providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, models: ['gpt-test'] }], models: { default: 'oa/gpt-test' } },
    });
    const installed = await api.request('POST', '/catalog/install', { body: { path: EXAMPLE, activate: true } });
    expect(installed.status).toBe(201);
    const agentId: string = installed.body.installed.find((p: { type: string }) => p.type === 'agent-template').id;

    fake.script({ text: 'Sorry to hear that. What is your policy number?', usage: { prompt_tokens: 120, completion_tokens: 12 } });
    const reply = await api.request('POST', `/agents/${agentId}/invoke`, {
      body: { source: 'Api', message: 'A tree fell on my car', correlation_id: 'fnol-1', workflow_type: 'claims_intake' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ content: 'Sorry to hear that. What is your policy number?', tokens_used: 132, correlation_id: 'fnol-1' });

    const agentPrompt = body(await readFile(`${EXAMPLE}/payload/AGENT.md`, 'utf8'));
    const competencyPrompt = body(await readFile(COMPETENCY, 'utf8'));
    const skillPrompt = body(await readFile(SKILL, 'utf8'));
    expect(fake.requests[0]?.body.messages).toEqual([
      { role: 'system', content: `${agentPrompt}\n\n${competencyPrompt}\n\n${skillPrompt}` },
      { role: 'user', content: 'A tree fell on my car' },
    ]);
    expect((await api.request('GET', '/usage/value-events')).body).toMatchObject({ total: 1, by_class: { intake: 1 }, by_solution: { claims_intake: 1 } });

    expect((await api.request('POST', `/agents/${agentId}/suspend`)).status).toBe(200);
    const refused = await api.request('POST', `/agents/${agentId}/send`, { body: { message: 'hello?' } });
    expect(refused.body.error).toMatchObject({ category: 'InvalidState', details: { state: 'Suspended' } });
    expect(fake.requests).toHaveLength(1);
  });
});
