import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// The example packages of the repository, installed as a user would, by absolute path.
const example = (name: string) => fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));

let api: TestApi;
let admin: string;

beforeEach(async () => {
  api = await startTestApi({ config: { auth: { mode: 'local' } } });
  admin = await api.issueKey('admin');
});
afterEach(async () => {
  await api.close();
});

const install = (body: Record<string, unknown>, token = admin) =>
  api.request('POST', '/catalog/install', { token, body });

describe('catalog routes', () => {
  it('installs claims-intake with its dependencies first, from the sibling example directories', async () => {
    const res = await install({ path: example('claims-intake') });
    expect(res.status).toBe(201);
    expect(
      res.body.installed.map((i: { type: string; name: string; version: string; status: string }) => [
        i.type,
        i.name,
        i.version,
        i.status,
      ]),
    ).toEqual([
      ['skill', 'loss-summary', '1.0.0', 'installed'],
      ['competency', 'fnol-triage', '1.0.0', 'installed'],
      ['agent-template', 'claims-intake', '1.0.0', 'installed'],
    ]);
    const agentId: string = res.body.installed[2].id;
    expect(agentId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.installed[1].id).toBe('fnol-triage');

    const installed = await api.request('GET', '/catalog/installed', { token: await api.issueKey('viewer') });
    expect(installed.status).toBe(200);
    expect(installed.body.packages).toEqual([
      {
        name: 'claims-intake',
        type: 'agent-template',
        version: '1.0.0',
        title: 'Claims intake',
        installed_at: expect.stringMatching(/Z$/),
        source: 'path',
        revoked: false,
        revocation: null,
      },
      {
        name: 'fnol-triage',
        type: 'competency',
        version: '1.0.0',
        title: 'FNOL triage',
        installed_at: expect.any(String),
        source: 'path',
        revoked: false,
        revocation: null,
      },
      {
        name: 'loss-summary',
        type: 'skill',
        version: '1.0.0',
        title: 'Loss summary',
        installed_at: expect.any(String),
        source: 'path',
        revoked: false,
        revocation: null,
      },
    ]);

    // Again: idempotent, nothing duplicated.
    const again = await install({ path: example('claims-intake') });
    expect(again.status).toBe(201);
    expect(again.body.installed).toEqual([
      { type: 'agent-template', name: 'claims-intake', version: '1.0.0', id: agentId, status: 'unchanged' },
    ]);
    expect((await api.request('GET', '/agents', { token: admin })).body.agents).toHaveLength(1);
  });

  it('lists installed agent templates', async () => {
    await install({ path: example('claims-intake') });
    await install({ path: example('policy-servicing') });
    const list = await api.request('GET', '/templates', { token: admin });
    expect(list.status).toBe(200);
    expect(list.body.templates.map((t: { name: string }) => t.name)).toEqual([
      'claims-intake',
      'policy-servicing',
    ]);
    const one = await api.request('GET', '/templates/claims-intake', { token: admin });
    expect(one.body).toEqual({
      name: 'claims-intake',
      title: 'Claims intake',
      version: '1.0.0',
      description: 'Takes the first notice of loss from a policyholder and gathers what a claim needs.',
      competencies: ['fnol-triage'],
    });
    expect((await api.request('GET', '/templates/fnol-triage', { token: admin })).status).toBe(404);
  });

  it('refuses install by name and search without a configured registry, and what it cannot read', async () => {
    const byName = await install({ name: 'claims-intake' });
    expect(byName.status).toBe(400);
    expect(byName.body.error).toMatchObject({
      category: 'CatalogError',
      message: expect.stringContaining('set [catalog] registry_url'),
    });
    const search = await api.request('GET', '/catalog/search?q=claims', { token: admin });
    expect(search.status).toBe(400);
    expect(search.body.error.category).toBe('CatalogError');
    const relative = await install({ path: 'examples/claims-intake' });
    expect(relative.status).toBe(400);
    expect(relative.body.error.message).toContain('absolute');
    expect((await install({ path: example('no-such-package') })).status).toBe(400);
    expect((await install({ path: example('claims-intake'), activate: 'yes' })).status).toBe(422);
    expect((await api.request('GET', '/catalog/installed', { token: admin })).body.packages).toEqual([]);
  });

  it('uninstalls: 404 when absent, 409 while Running or needed, 204 after suspend', async () => {
    expect((await api.request('DELETE', '/catalog/installed/claims-intake', { token: admin })).status).toBe(
      404,
    );
    const res = await install({ path: example('claims-intake'), activate: true });
    const agentId: string = res.body.installed[2].id;

    const running = await api.request('DELETE', '/catalog/installed/claims-intake', { token: admin });
    expect(running.status).toBe(409);
    expect(running.body.error).toMatchObject({
      category: 'Conflict',
      message: expect.stringContaining('Running'),
    });
    const needed = await api.request('DELETE', '/catalog/installed/fnol-triage', { token: admin });
    expect(needed.status).toBe(409);
    expect(needed.body.error.details.dependents).toEqual(['claims-intake']);

    expect((await api.request('POST', `/agents/${agentId}/suspend`, { token: admin })).status).toBe(200);
    const removed = await api.request('DELETE', '/catalog/installed/claims-intake', { token: admin });
    expect(removed.status).toBe(204);
    expect(removed.body).toBe('');
    expect((await api.request('GET', `/agents/${agentId}`, { token: admin })).status).toBe(404);
    expect((await api.request('GET', '/agents', { token: admin })).body.agents).toEqual([]);

    const audit = await api.request('GET', '/security/audit?category=agents', { token: admin });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(
      expect.arrayContaining(['POST /catalog/install', 'DELETE /catalog/installed/:name']),
    );
  });

  it('lets a developer install but not a viewer', async () => {
    expect(
      (await install({ path: example('policy-servicing') }, await api.issueKey('developer'))).status,
    ).toBe(201);
    const viewer = await install({ path: example('policy-servicing') }, await api.issueKey('viewer'));
    expect(viewer.status).toBe(403);
    expect(viewer.body.error).toBe('forbidden');
  });
});
