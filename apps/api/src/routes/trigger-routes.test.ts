import { agentFixture } from '@agent-platform/domain/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Spec §Endpoints "Triggers" over HTTP (inject): every route, every refusal, and that a refused
// request changes nothing. Firing is tested in apps/platform/src/events and tests/e2e.
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let api: TestApi;
let token: string;
let agent: string;

beforeEach(async () => {
  api = await startTestApi({ listen: false, config: { auth: { mode: 'local' } } });
  token = await api.issueKey('operator');
  agent = (await api.deps.agents.insert(agentFixture())).id;
});
afterEach(async () => {
  await api.close();
});

const call = (method: string, path: string, body?: unknown, as = token) =>
  api.request(method, path, { token: as, ...(body === undefined ? {} : { body }) });
const all = async () => (await call('GET', '/triggers')).body.triggers as unknown[];

describe('create, list, delete', () => {
  it('creates with the spec defaults, lists everywhere, deletes with 204', async () => {
    const created = await call('POST', `/agents/${agent}/triggers`, { pattern: { lifecycle: {} } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const second = await call('POST', `/agents/${agent}/triggers`, {
      pattern: { agent_spawned: { name_pattern: 'claims-*' }, invocation_failed: { agent_id: agent } },
      prompt_template: 'Look at {{event}}',
      max_fires: 3,
    });
    expect(second.status).toBe(201);

    const expected = [
      { id: created.body.id, agent_id: agent, pattern: { lifecycle: {} }, prompt_template: 'Event: {{event}}', max_fires: 0, fires_count: 0, created_at: expect.any(String) },
      {
        id: second.body.id,
        agent_id: agent,
        pattern: { agent_spawned: { name_pattern: 'claims-*' }, invocation_failed: { agent_id: agent } },
        prompt_template: 'Look at {{event}}',
        max_fires: 3,
        fires_count: 0,
        created_at: expect.any(String),
      },
    ];
    expect((await call('GET', '/triggers')).body).toEqual({ triggers: expected });
    expect((await call('GET', `/agents/${agent}/triggers`)).body).toEqual({ triggers: expected });
    const other = (await api.deps.agents.insert(agentFixture({ name: 'other' }))).id;
    expect((await call('GET', `/agents/${other}/triggers`)).body).toEqual({ triggers: [] });
    expect((await call('GET', `/triggers/${created.body.id}/fires`)).body).toEqual({ fires: [] });

    const deleted = await call('DELETE', `/triggers/${created.body.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expect((await all()).map((t) => (t as { id: string }).id)).toEqual([second.body.id]);
    const again = await call('DELETE', `/triggers/${created.body.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ category: 'NotFound', message: expect.stringContaining('trigger') });
  });

  it('a viewer reads triggers but may not create or delete them', async () => {
    const viewer = await api.issueKey('viewer');
    expect((await call('GET', '/triggers', undefined, viewer)).status).toBe(200);
    const refused = await call('POST', `/agents/${agent}/triggers`, { pattern: { lifecycle: {} } }, viewer);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'forbidden', message: expect.stringContaining('TriggerManage') });
    expect(await all()).toEqual([]);
  });
});

describe('bad input changes nothing', () => {
  // Wrong field types are 422 MalformedBody (spec "Other status codes"); bad values 400.
  const cases: Array<[string, unknown, number, string]> = [
    ['an unknown pattern key', { pattern: { on_anything: {} } }, 400, "unknown pattern key 'on_anything'"],
    ['an unknown filter', { pattern: { lifecycle: { colour: 'red' } } }, 400, "unknown filter 'colour' in pattern key 'lifecycle'"],
    ['a filter that is not a string', { pattern: { agent_spawned: { name_pattern: 7 } } }, 400, "filter 'name_pattern'"],
    ['an empty pattern', { pattern: {} }, 400, 'at least one key'],
    ['a missing pattern', { prompt_template: 'x' }, 400, 'pattern'],
    ['a pattern that is not an object', { pattern: 'lifecycle' }, 422, 'pattern'],
    ['a pattern key that is not an object', { pattern: { lifecycle: true } }, 422, 'pattern'],
    ['a negative max_fires', { pattern: { lifecycle: {} }, max_fires: -1 }, 400, 'max_fires'],
    ['a fractional max_fires', { pattern: { lifecycle: {} }, max_fires: 1.5 }, 422, 'max_fires'],
    ['a string max_fires', { pattern: { lifecycle: {} }, max_fires: 'three' }, 422, 'max_fires'],
    ['a prompt_template that is not a string', { pattern: { lifecycle: {} }, prompt_template: 5 }, 422, 'prompt_template'],
    ['an unknown field', { pattern: { lifecycle: {} }, fires_count: 9 }, 400, 'fires_count'],
  ];
  it.each(cases)('%s', async (_name, body, status, text) => {
    const res = await call('POST', `/agents/${agent}/triggers`, body);
    expect(res.status).toBe(status);
    expect(res.body.error.category).toBe(status === 422 ? 'MalformedBody' : 'ValidationError');
    expect(res.body.error.message).toContain(text);
    expect(await all()).toEqual([]);
  });

  it('an unknown agent is 404 and a bad agent or trigger id is 400 naming the id kind', async () => {
    const unknown = await call('POST', `/agents/${UNKNOWN}/triggers`, { pattern: { lifecycle: {} } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ category: 'NotFound', message: expect.stringContaining(UNKNOWN) });
    expect((await call('GET', `/agents/${UNKNOWN}/triggers`)).status).toBe(404);

    for (const [method, path] of [
      ['POST', '/agents/nope/triggers'],
      ['GET', '/agents/nope/triggers'],
      ['DELETE', '/triggers/nope'],
      ['GET', '/triggers/nope/fires'],
    ] as const) {
      const res = await call(method, path, method === 'POST' ? { pattern: { lifecycle: {} } } : undefined);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.error).toMatchObject({ category: 'ValidationError', message: expect.stringMatching(/agent|trigger/) });
    }
    expect((await call('DELETE', `/triggers/${UNKNOWN}`)).status).toBe(404);
    expect((await call('GET', `/triggers/${UNKNOWN}/fires`)).status).toBe(404);
    expect(await all()).toEqual([]);
  });
});
