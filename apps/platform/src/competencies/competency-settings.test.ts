import { competencySettings, settingsId } from '@agent-platform/domain';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  SETTINGS_FRONTMATTER,
  startCompetencyHarness,
  type CompetencyHarness,
} from './competency-fixture.ts';

// Per-agent competency settings over HTTP (docs/competencies.md "Settings"): validated against
// the competency's `settings` schema, all or nothing, and rendered into its prompt.
let h: CompetencyHarness | null = null;
let fake: FakeOpenAiServer | null = null;
afterEach(async () => {
  await h?.close();
  await fake?.close();
  h = null;
  fake = null;
});

const SCHEMA = [
  { key: 'tone', label: 'Tone', type: 'Select', default: 'formal', values: ['formal', 'friendly'] },
  { key: 'escalate', label: 'Escalate to a human', type: 'Toggle', default: true },
  { key: 'max_amount', label: 'Maximum amount', type: 'Number', default: 5000 },
  { key: 'signature', label: 'Signature', type: 'Text' },
];
const DEFAULTS = { tone: 'formal', escalate: 'true', max_amount: '5000', signature: '' };

async function start(): Promise<{ harness: CompetencyHarness; agentId: string }> {
  fake = await startFakeOpenAiServer();
  h = await startCompetencyHarness({
    config: {
      providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, models: ['gpt-test'] }],
      models: { default: 'oa/gpt-test' },
    },
  });
  await h.install({
    type: 'competency',
    name: 'fnol-triage',
    frontmatter: SETTINGS_FRONTMATTER,
    body: 'Answer in a {{settings.tone}} tone. Escalate: {{ settings.escalate }}. Limit {{settings.max_amount}} USD. {{settings.signature}}{{settings.typo}}',
  });
  await h.install({ type: 'competency', name: 'plain-notes', body: 'Keep notes.' });
  const agentId = await h.install(
    {
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['fnol-triage', 'plain-notes'],
      body: 'You take claims.',
    },
    { activate: true },
  );
  return { harness: h, agentId };
}

const configPath = (agentId: string, cid = 'fnol-triage') => `/agents/${agentId}/competencies/${cid}/config`;

async function systemPrompt(harness: CompetencyHarness, agentId: string): Promise<string> {
  fake!.script({ text: 'ok' });
  const res = await harness.api.request('POST', `/agents/${agentId}/send`, { body: { message: 'hello' } });
  expect(res.status).toBe(200);
  return fake!.requests.at(-1)!.body.messages[0].content as string;
}

describe('GET /agents/{id}/competencies/{cid}/config', () => {
  it('returns every setting with its default filled, as strings, plus the schema', async () => {
    const { harness, agentId } = await start();
    const res = await harness.api.request('GET', configPath(agentId));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      agent_id: agentId,
      competency_id: 'fnol-triage',
      values: DEFAULTS,
      schema: SCHEMA,
    });
    expect((await harness.api.request('GET', configPath(agentId, 'plain-notes'))).body).toMatchObject({
      values: {},
      schema: [],
    });
  });

  it('answers 404 for a competency the agent does not equip, and for an unknown agent', async () => {
    const { harness, agentId } = await start();
    await harness.install({ type: 'competency', name: 'other-one' });
    const notEquipped = await harness.api.request('GET', configPath(agentId, 'other-one'));
    expect(notEquipped.status).toBe(404);
    expect(notEquipped.body.error.message).toBe("agent claims-intake does not equip competency 'other-one'");
    expect(
      (await harness.api.request('GET', configPath('00000000-0000-4000-8000-000000000000'))).status,
    ).toBe(404);
  });
});

describe('PUT /agents/{id}/competencies/{cid}/config', () => {
  it('stores valid values (strings, or a JSON boolean/number for Toggle/Number) and GET shows them', async () => {
    const { harness, agentId } = await start();
    const res = await harness.api.request('PUT', configPath(agentId), {
      body: { tone: 'friendly', escalate: 'false', max_amount: '250.5' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'updated' });
    // A second PUT changes only the keys it names.
    expect(
      (
        await harness.api.request('PUT', configPath(agentId), {
          body: { signature: 'Acme claims desk', escalate: true, max_amount: 100 },
        })
      ).status,
    ).toBe(200);
    expect((await harness.api.request('GET', configPath(agentId))).body.values).toEqual({
      tone: 'friendly',
      escalate: 'true',
      max_amount: '100',
      signature: 'Acme claims desk',
    });
  });

  it.each([
    [{ tone: 'rude' }, 'tone: must be one of formal, friendly'],
    [{ escalate: 'yes' }, 'escalate: must be true or false'],
    [{ max_amount: 'lots' }, 'max_amount: must be a number'],
    [{ max_amount: '' }, 'max_amount: must be a number'],
    [
      { colour: 'blue' },
      'colour: unknown setting of competency fnol-triage (its settings: tone, escalate, max_amount, signature)',
    ],
    [{ signature: 42 }, 'signature: must be a string (got number)'],
    [{ tone: 'friendly', escalate: 'maybe' }, 'escalate: must be true or false'],
  ])('refuses %j with 400 naming key and reason, and changes nothing', async (body, named) => {
    const { harness, agentId } = await start();
    const res = await harness.api.request('PUT', configPath(agentId), { body });
    expect(res.status).toBe(400);
    expect(res.body.error.category).toBe('ValidationError');
    expect(res.body.error.message).toContain(named);
    expect(res.body.error.details.problems).toContainEqual(
      expect.objectContaining({ key: named.split(':')[0] }),
    );
    expect((await harness.api.request('GET', configPath(agentId))).body.values).toEqual(DEFAULTS);
  });

  it('refuses a competency the agent does not equip with 404, storing nothing', async () => {
    const { harness, agentId } = await start();
    const res = await harness.api.request('PUT', configPath(agentId, 'not-equipped'), {
      body: { tone: 'friendly' },
    });
    expect(res.status).toBe(404);
  });
});

describe('settings in the prompt', () => {
  it('renders {{settings.<key>}} with the defaults, then with the values set; unknown placeholders stay; equip order holds', async () => {
    const { harness, agentId } = await start();
    expect(await systemPrompt(harness, agentId)).toBe(
      'You take claims.\n\nAnswer in a formal tone. Escalate: true. Limit 5000 USD. {{settings.typo}}\n\nKeep notes.',
    );
    await harness.api.request('PUT', configPath(agentId), {
      body: { tone: 'friendly', signature: '-- Acme.' },
    });
    await harness.api.request('PUT', `/agents/${agentId}/competencies/order`, {
      body: { order: ['plain-notes', 'fnol-triage'] },
    });
    expect(await systemPrompt(harness, agentId)).toBe(
      'You take claims.\n\nKeep notes.\n\nAnswer in a friendly tone. Escalate: true. Limit 5000 USD. -- Acme.{{settings.typo}}',
    );
  });

  it('after a competency upgrade, a stored value the new schema no longer allows reads as the new default', async () => {
    const { harness, agentId } = await start();
    await harness.api.request('PUT', configPath(agentId), { body: { tone: 'friendly', max_amount: '10' } });
    await harness.install({
      type: 'competency',
      name: 'fnol-triage',
      version: '1.1.0',
      frontmatter: SETTINGS_FRONTMATTER.replace(
        'values: [formal, friendly]',
        'values: [formal, casual]',
      ).replace('default: formal', 'default: casual'),
      body: 'Tone {{settings.tone}}, limit {{settings.max_amount}}.',
    });
    expect((await harness.api.request('GET', configPath(agentId))).body.values).toMatchObject({
      tone: 'casual',
      max_amount: '10',
    });
    expect(await systemPrompt(harness, agentId)).toBe(
      'You take claims.\n\nTone casual, limit 10.\n\nKeep notes.',
    );
  });

  it('keeps settings across an agent upgrade and drops them when the agent is uninstalled', async () => {
    const { harness, agentId } = await start();
    await harness.api.request('PUT', configPath(agentId), { body: { tone: 'friendly' } });
    await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      version: '1.1.0',
      competencies: ['fnol-triage'],
      body: 'You take claims.',
    });
    expect((await harness.api.request('GET', configPath(agentId))).body.values.tone).toBe('friendly');

    expect((await harness.api.request('POST', `/agents/${agentId}/suspend`)).status).toBe(200);
    const stored = competencySettings(harness.api.deps.store);
    expect(await stored.get(settingsId(agentId, 'fnol-triage'))).not.toBeNull();
    expect((await harness.api.request('DELETE', '/catalog/installed/claims-intake')).status).toBe(204);
    expect(await stored.get(settingsId(agentId, 'fnol-triage'))).toBeNull();
    const again = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['fnol-triage'],
    });
    expect((await harness.api.request('GET', configPath(again))).body.values.tone).toBe('formal');
  });
});
