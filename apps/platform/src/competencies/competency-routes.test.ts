import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCompetencyHarness, type CompetencyHarness } from './competency-fixture.ts';

// Spec §Endpoints "Competencies" over HTTP against the all-in-one (docs/competencies.md):
// competencies enter through the catalog, are equipped through AGENT.md, and these routes show
// and order them.
let h: CompetencyHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const UNKNOWN_AGENT = '00000000-0000-4000-8000-000000000000';

async function start(): Promise<CompetencyHarness> {
  h = await startCompetencyHarness();
  return h;
}

describe('GET /competencies, /competencies/{id}, /deps: status Installed -> Equipped, {Error} for missing skills', () => {
  it('moves from Installed to Equipped when an agent equips it, and back when the agent goes', async () => {
    const { api, install } = await start();
    await install({ type: 'skill', name: 'summarize' });
    await install({
      type: 'competency',
      name: 'fnol-triage',
      skills: ['summarize'],
      body: 'Triage the claim.',
    });
    expect((await api.request('GET', '/competencies')).body).toEqual({
      competencies: [
        {
          id: 'fnol-triage',
          name: 'fnol-triage',
          version: '1.0.0',
          status: 'Installed',
          skills: ['summarize'],
        },
      ],
    });

    await install({ type: 'agent-template', name: 'claims-intake', competencies: ['fnol-triage'] });
    const detail = await api.request('GET', '/competencies/fnol-triage');
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({
      id: 'fnol-triage',
      manifest: {
        id: 'fnol-triage',
        name: 'fnol-triage',
        version: '1.0.0',
        description: 'A competency.',
        system_prompt: 'Triage the claim.',
        skills: ['summarize'],
        permissions: [],
        settings: [],
        schedule: null,
        schedule_action: null,
      },
      status: 'Equipped',
      skill_states: [{ skill_id: 'summarize', state: 'Installed' }],
    });
    expect((await api.request('GET', '/competencies')).body.competencies[0].status).toBe('Equipped');

    expect((await api.request('DELETE', '/catalog/installed/claims-intake')).status).toBe(204);
    expect((await api.request('GET', '/competencies')).body.competencies[0].status).toBe('Installed');
  });

  it('reports {Error} naming the missing skill, and the dependency report says not ready, under both paths', async () => {
    const { api, install } = await start();
    await install({ type: 'skill', name: 'summarize' });
    await install({
      type: 'competency',
      name: 'fraud-check',
      skills: ['summarize', 'fraud-score'],
      contracts: ['claims-system'],
    });
    await install({ type: 'agent-template', name: 'claims-intake', competencies: ['fraud-check'] });

    const [info] = (await api.request('GET', '/competencies')).body.competencies;
    expect(info.status).toEqual({ Error: 'skill(s) not installed: fraud-score' });
    const detail = (await api.request('GET', '/competencies/fraud-check')).body;
    expect(detail.skill_states).toEqual([
      { skill_id: 'summarize', state: 'Installed' },
      { skill_id: 'fraud-score', state: 'Missing' },
    ]);
    expect(detail.manifest.permissions).toEqual([{ kind: 'contract', name: 'claims-system' }]);
    for (const path of ['/competencies/fraud-check/deps', '/competencies/fraud-check/validate-deps']) {
      const res = await api.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        competency_id: 'fraud-check',
        skills: [
          { skill_id: 'summarize', state: 'Installed' },
          { skill_id: 'fraud-score', state: 'Missing' },
        ],
        ready: false,
      });
    }

    // Installing the skill clears the error; the status falls back to Equipped.
    await install({ type: 'skill', name: 'fraud-score' });
    expect((await api.request('GET', '/competencies/fraud-check')).body.status).toBe('Equipped');
    expect((await api.request('GET', '/competencies/fraud-check/deps')).body.ready).toBe(true);
  });

  it('answers 404 NotFound for an unknown competency', async () => {
    const { api } = await start();
    for (const path of [
      '/competencies/nope',
      '/competencies/nope/deps',
      '/competencies/nope/validate-deps',
    ]) {
      const res = await api.request('GET', path);
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({
        category: 'NotFound',
        message: "competency 'nope' not found",
        details: { kind: 'competency', id: 'nope' },
      });
    }
  });
});

describe('POST /competencies/install', () => {
  it('installs a competency package and its dependencies: 201 {id}', async () => {
    const { api, write } = await start();
    await write({ type: 'skill', name: 'summarize' });
    const path = await write({
      type: 'competency',
      name: 'fnol-triage',
      skills: ['summarize'],
      dependencies: { summarize: '^1.0.0' },
    });
    const res = await api.request('POST', '/competencies/install', { body: { path } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: 'fnol-triage' });
    const installed = (await api.request('GET', '/catalog/installed')).body.packages.map(
      (p: { name: string }) => p.name,
    );
    expect(installed).toEqual(['fnol-triage', 'summarize']);
    expect((await api.request('GET', '/competencies/fnol-triage/deps')).body.ready).toBe(true);
  });

  it('refuses any other package type with 400 naming it, and installs nothing (not even its dependencies)', async () => {
    const { api, write } = await start();
    await write({ type: 'competency', name: 'fnol-triage' });
    for (const spec of [
      { type: 'skill' as const, name: 'summarize' },
      {
        type: 'agent-template' as const,
        name: 'claims-intake',
        dependencies: { 'fnol-triage': '^1.0.0' },
        competencies: ['fnol-triage'],
      },
    ]) {
      const res = await api.request('POST', '/competencies/install', { body: { path: await write(spec) } });
      expect(res.status).toBe(400);
      expect(res.body.error.category).toBe('ValidationError');
      expect(res.body.error.message).toContain(
        `is a ${spec.type} package (${spec.name}); this route installs competency packages only`,
      );
    }
    expect((await api.request('GET', '/catalog/installed')).body.packages).toEqual([]);
    expect((await api.request('GET', '/agents')).body.agents ?? []).toEqual([]);
  });

  it('refuses a bad competency package with a clear error listing the problems, and installs nothing', async () => {
    const { api, write } = await start();
    const path = await write({ type: 'competency', name: 'broken' });
    await writeFile(
      join(path, 'payload', 'COMPETENCY.md'),
      '---\ndescription: Broken.\nskills: []\nsettings:\n  - key: tone\n    label: Tone\n    type: Select\nschedule: "not a cron"\ncategory: x\n---\nBody.\n',
    );
    const res = await api.request('POST', '/competencies/install', { body: { path } });
    expect(res.status).toBe(400);
    expect(res.body.error.category).toBe('ValidationError');
    const fields = (res.body.error.details.problems as Array<{ field: string }>)
      .map((p) => p.field)
      .join(' ');
    for (const field of ['skills', 'settings[0].values', 'schedule', 'category'])
      expect(fields).toContain(field);
    expect((await api.request('GET', '/competencies')).body).toEqual({ competencies: [] });
  });

  it('refuses a missing or relative path with 400', async () => {
    const { api } = await start();
    expect((await api.request('POST', '/competencies/install', { body: {} })).status).toBe(400);
    const relative = await api.request('POST', '/competencies/install', { body: { path: 'fnol-triage' } });
    expect(relative.status).toBe(400);
    expect(relative.body.error.message).toContain('path must be absolute');
  });
});

describe('the deprecated and fixed routes', () => {
  it('GET and PUT /competencies/{id}/config answer 410 with deprecated, message, empty values and schema', async () => {
    const { api, install } = await start();
    await install({ type: 'competency', name: 'fnol-triage' });
    for (const [method, path] of [
      ['GET', '/competencies/fnol-triage/config'],
      ['PUT', '/competencies/fnol-triage/config'],
      ['GET', '/competencies/unknown-one/config'],
    ] as const) {
      const res = await api.request(method, path, method === 'PUT' ? { body: { tone: 'formal' } } : {});
      expect(res.status).toBe(410);
      expect(res.body).toEqual({
        deprecated: true,
        message: expect.stringContaining('/agents/{id}/competencies/{cid}/config'),
        values: {},
        schema: [],
      });
    }
  });

  it('GET /competencies/active is always an empty array', async () => {
    const { api, install } = await start();
    await install({ type: 'competency', name: 'fnol-triage' });
    await install(
      { type: 'agent-template', name: 'claims-intake', competencies: ['fnol-triage'] },
      { activate: true },
    );
    const res = await api.request('GET', '/competencies/active');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });
});

describe('GET /agents/{id}/competencies and PUT /agents/{id}/competencies/order', () => {
  async function equippedAgent(harness: CompetencyHarness): Promise<string> {
    for (const name of ['alpha-skill', 'beta-skill', 'gamma-skill'])
      await harness.install({ type: 'competency', name });
    return harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['alpha-skill', 'beta-skill', 'gamma-skill'],
    });
  }

  it('lists in equip order and reorders with a permutation: 200 empty body', async () => {
    const harness = await start();
    const agentId = await equippedAgent(harness);
    const { api } = harness;
    expect((await api.request('GET', `/agents/${agentId}/competencies`)).body).toEqual({
      competencies: ['alpha-skill', 'beta-skill', 'gamma-skill'],
    });
    const res = await api.request('PUT', `/agents/${agentId}/competencies/order`, {
      body: { order: ['gamma-skill', 'alpha-skill', 'beta-skill'] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
    expect((await api.request('GET', `/agents/${agentId}/competencies`)).body).toEqual({
      competencies: ['gamma-skill', 'alpha-skill', 'beta-skill'],
    });
  });

  it.each([
    [['alpha-skill', 'beta-skill'], 'missing gamma-skill'],
    [['alpha-skill', 'beta-skill', 'gamma-skill', 'delta-skill'], 'not equipped delta-skill'],
    [['alpha-skill', 'beta-skill', 'gamma-skill', 'alpha-skill'], 'repeated alpha-skill'],
    [[], 'missing alpha-skill, beta-skill, gamma-skill'],
  ])('refuses %j with 400 naming what differs (%s), and changes nothing', async (order, named) => {
    const harness = await start();
    const agentId = await equippedAgent(harness);
    const res = await harness.api.request('PUT', `/agents/${agentId}/competencies/order`, {
      body: { order },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.category).toBe('ValidationError');
    expect(res.body.error.message).toContain(named);
    expect((await harness.api.request('GET', `/agents/${agentId}/competencies`)).body.competencies).toEqual([
      'alpha-skill',
      'beta-skill',
      'gamma-skill',
    ]);
  });

  it('answers 404 for an unknown agent and 400 for a malformed agent id', async () => {
    const { api } = await start();
    expect((await api.request('GET', `/agents/${UNKNOWN_AGENT}/competencies`)).status).toBe(404);
    expect(
      (await api.request('PUT', `/agents/${UNKNOWN_AGENT}/competencies/order`, { body: { order: [] } }))
        .status,
    ).toBe(404);
    const bad = await api.request('GET', '/agents/not-a-uuid/competencies');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('invalid agent id');
    expect(
      (await api.request('PUT', `/agents/${UNKNOWN_AGENT}/competencies/order`, { body: { order: 'x' } }))
        .status,
    ).toBeGreaterThanOrEqual(400);
  });
});
