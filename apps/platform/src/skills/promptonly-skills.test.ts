import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundledSkills } from '@agent-platform/domain';
import { writePackage } from '@agent-platform/domain/testing';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Runtime promptonly (docs/skills.md): the SKILL.md body joins the system prompt of the agents
// whose competencies list the skill, seen on the wire by an OpenAI-protocol model (STYLE §5).
let api: PlatformTestApi;
let fake: FakeOpenAiServer;
let root: string;

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
  root = await mkdtemp(join(tmpdir(), 'ap-promptonly-'));
  api = await startPlatformTestApi({
    config: { providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, models: ['gpt-test'] }], models: { default: 'oa/gpt-test' } },
  });
});
afterEach(async () => {
  await api.close();
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

describe('promptonly skills', () => {
  it("join the system prompt after their competency's body, installed and bundled ones alike", async () => {
    await writePackage(root, { type: 'skill', name: 'claim-tone', body: 'Always name the claim number.' });
    await writePackage(root, {
      type: 'competency',
      name: 'intake',
      skills: ['claim-tone', 'plain-language'],
      dependencies: { 'claim-tone': '^1.0.0' },
      body: 'Triage new claims.',
    });
    const agentDir = await writePackage(root, {
      type: 'agent-template',
      name: 'helper',
      competencies: ['intake'],
      dependencies: { intake: '^1.0.0' },
      body: 'You are the claims helper.',
    });
    const installed = await api.request('POST', '/catalog/install', { body: { path: agentDir, activate: true } });
    expect(installed.status).toBe(201);
    const agentId: string = installed.body.installed.at(-1).id;

    fake.script({ text: 'Noted.' });
    const res = await api.request('POST', `/agents/${agentId}/send`, { body: { message: 'My car was hit.' } });
    expect(res.status).toBe(200);
    const plainLanguage = (await bundledSkills()).get('plain-language')!.body.trim();
    expect(fake.requests[0]?.body.messages).toEqual([
      {
        role: 'system',
        content: ['You are the claims helper.', 'Triage new claims.', 'Always name the claim number.', plainLanguage].join('\n\n'),
      },
      { role: 'user', content: 'My car was hit.' },
    ]);
  });
});
