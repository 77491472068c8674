import { fileURLToPath } from 'node:url';
import { fixedClock } from '@agent-platform/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

const example = (name: string) => fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let api: TestApi;
let admin: string;
let clock: ReturnType<typeof fixedClock>;

beforeEach(async () => {
  clock = fixedClock('2030-01-01T00:00:00.000Z');
  api = await startTestApi({ config: { auth: { mode: 'local' } }, clock });
  admin = await api.issueKey('admin');
});
afterEach(async () => {
  await api.close();
});

async function installExample(name: string, activate = false): Promise<string> {
  const res = await api.request('POST', '/catalog/install', {
    token: admin,
    body: { path: example(name), activate },
  });
  expect(res.status).toBe(201);
  return res.body.installed.at(-1).id as string;
}

const get = (path: string, token = admin) => api.request('GET', path, { token });
const post = (path: string) => api.request('POST', path, { token: admin });

describe('agent list and status', () => {
  it('lists agents with their template title; equipped_competencies only when there are some', async () => {
    const claims = await installExample('claims-intake');
    const servicing = await installExample('policy-servicing');
    const res = await get('/agents', await api.issueKey('service'));
    expect(res.status).toBe(200);
    expect(res.body.agents).toEqual([
      {
        id: claims,
        name: 'claims-intake',
        title: 'Claims intake',
        state: 'Suspended',
        equipped_competencies: ['fnol-triage'],
      },
      { id: servicing, name: 'policy-servicing', title: 'Policy servicing', state: 'Suspended' },
    ]);
    // No surviving template record: title null.
    await api.deps.store.collection('installed_packages').delete('policy-servicing');
    expect((await get('/agents')).body.agents[1].title).toBeNull();
  });

  it('reports uptime since activation and the invocation counters', async () => {
    const id = await installExample('claims-intake');
    const suspended = await get(`/agents/${id}`);
    expect(suspended.status).toBe(200);
    expect(suspended.body).toEqual({
      id,
      name: 'claims-intake',
      state: 'Suspended',
      equipped_competencies: ['fnol-triage'],
      uptime: 0,
      tasks_received: 0,
      tasks_completed: 0,
      invocation_metrics: { total_count: 0, error_count: 0, avg_duration_ms: 0, by_source: [] },
    });

    expect((await post(`/agents/${id}/activate`)).status).toBe(200);
    clock.advance(1500);
    const stats = api.deps.agentStats;
    await stats.received(id, 'Api');
    await stats.received(id, 'Cron');
    await stats.finished(id, 'Api', { ok: true, duration_ms: 20 });
    await stats.finished(id, 'Cron', { ok: false, duration_ms: 5 });
    const running = await get(`/agents/${id}`);
    expect(running.body).toMatchObject({
      state: 'Running',
      uptime: 1500,
      tasks_received: 2,
      tasks_completed: 1,
      invocation_metrics: {
        total_count: 2,
        error_count: 1,
        avg_duration_ms: 12,
        by_source: [
          ['Api', 1, 0, 20],
          ['Cron', 1, 1, 5],
        ],
      },
    });
  });

  it('answers 404 for an unknown agent and 400 naming "agent" for a bad id', async () => {
    expect((await get(`/agents/${UNKNOWN}`)).status).toBe(404);
    const bad = await get('/agents/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      category: 'ValidationError',
      message: expect.stringContaining('agent'),
    });
  });
});

describe('agent state machine', () => {
  it('activates and suspends with empty 200 bodies, refusing repeats with InvalidState (500)', async () => {
    const id = await installExample('claims-intake');
    const activated = await post(`/agents/${id}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body).toBe('');
    expect(activated.headers['content-length']).toBe('0');

    const again = await post(`/agents/${id}/activate`);
    expect(again.status).toBe(500);
    expect(again.body.error).toEqual({
      category: 'InvalidState',
      message: 'agent claims-intake is already Running; use suspend',
      details: { agent_id: id, state: 'Running', valid_command: 'suspend' },
    });

    const suspended = await post(`/agents/${id}/suspend`);
    expect(suspended.status).toBe(200);
    expect(suspended.body).toBe('');
    const twice = await post(`/agents/${id}/suspend`);
    expect(twice.status).toBe(500);
    expect(twice.body.error).toMatchObject({
      category: 'InvalidState',
      message: 'agent claims-intake is already Suspended; use activate',
    });
    expect((await get(`/agents/${id}`)).body.state).toBe('Suspended');
    expect((await post(`/agents/${UNKNOWN}/activate`)).status).toBe(404);
  });

  it('starts Running when installed with activate: true', async () => {
    const id = await installExample('claims-intake', true);
    expect((await get(`/agents/${id}`)).body.state).toBe('Running');
  });

  it('is operator work: a developer may not activate', async () => {
    const id = await installExample('policy-servicing');
    const res = await api.request('POST', `/agents/${id}/activate`, {
      token: await api.issueKey('developer'),
    });
    expect(res.status).toBe(403);
  });
});

describe('agent settings', () => {
  it('PUT /agents/{id} accepts any object and changes nothing', async () => {
    const id = await installExample('policy-servicing');
    const before = await get(`/agents/${id}`);
    const res = await api.request('PUT', `/agents/${id}`, {
      token: admin,
      body: { name: 'renamed', anything: [1, 2] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'updated' });
    expect((await get(`/agents/${id}`)).body).toEqual(before.body);
    expect((await api.request('PUT', `/agents/${UNKNOWN}`, { token: admin, body: {} })).status).toBe(404);
    expect((await api.request('PUT', `/agents/${id}`, { token: admin, body: [1] })).status).toBe(422);
  });

  it('records a model preference', async () => {
    const id = await installExample('policy-servicing');
    const res = await api.request('PUT', `/agents/${id}/model`, {
      token: admin,
      body: { model_id: 'gpt-4o-mini', provider: 'openai' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'model_updated' });
    expect((await api.deps.agents.get(id))?.model_preference).toEqual({
      model_id: 'gpt-4o-mini',
      provider: 'openai',
    });
    expect(
      (await api.request('PUT', `/agents/${id}/model`, { token: admin, body: { model_id: 'x' } })).status,
    ).toBe(400);
    expect(
      (
        await api.request('PUT', `/agents/${id}/model`, {
          token: admin,
          body: { model_id: 'x', provider: 3 },
        })
      ).status,
    ).toBe(422);
  });

  it('has no tools or skills to show', async () => {
    const id = await installExample('claims-intake');
    expect((await get(`/agents/${id}/tools`)).body).toEqual({ tools: [] });
    expect((await get(`/agents/${id}/skills`)).body).toEqual({ skills: [] });
  });
});

describe('sessions', () => {
  it('reports session rows and clears them with reset and history deletion', async () => {
    const claims = await installExample('claims-intake');
    const servicing = await installExample('policy-servicing');
    await api.deps.sessions.append(
      claims,
      [{ role: 'user', content: 'My car was hit', at: '2030-01-01T00:00:00Z' }],
      20,
    );
    const viewer = await api.issueKey('viewer');

    expect((await get(`/agents/${claims}/session`, viewer)).body).toEqual({
      agent_id: claims,
      state: 'active',
      messages: [],
    });
    expect((await get(`/agents/${claims}/sessions`, viewer)).body).toEqual({
      sessions: [{ agent_id: claims, state: 'active' }],
    });
    expect((await get('/sessions', viewer)).body).toEqual({
      sessions: [
        { agent_id: claims, agent_name: 'claims-intake', state: 'active' },
        { agent_id: servicing, agent_name: 'policy-servicing', state: 'empty' },
      ],
    });

    const reset = await post(`/agents/${claims}/session/reset`);
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ status: 'reset' });
    expect((await get(`/agents/${claims}/session`)).body.state).toBe('empty');

    await api.deps.sessions.append(
      claims,
      [{ role: 'user', content: 'again', at: '2030-01-01T00:00:00Z' }],
      20,
    );
    const deleted = await api.request('DELETE', `/agents/${claims}/history`, { token: admin });
    expect(deleted.status).toBe(204);
    expect(await api.deps.sessions.history(claims)).toEqual([]);
  });

  it('answers 404 to reset and history deletion for an unknown agent', async () => {
    expect((await post(`/agents/${UNKNOWN}/session/reset`)).status).toBe(404);
    expect((await api.request('DELETE', `/agents/${UNKNOWN}/history`, { token: admin })).status).toBe(404);
    expect((await get(`/agents/${UNKNOWN}/session`)).status).toBe(404);
  });
});
