import { fileURLToPath } from 'node:url';
import type { Revocation } from '@agent-platform/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Revocations over the api (docs/catalog.md "Revocations"): the feed entry is applied through
// the domain service the watcher calls (the watcher itself: revocations/revocation-watcher.test.ts).
const example = (name: string) => fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));
const KEY_ID = 'sha256:5f1c0ffee5f1c0ffee5f1c0ffee5f1c0';
const ROUTE = '/catalog/installed/claims-intake/override-revocation';

let api: TestApi;
let admin: string;
let operator: string;

beforeEach(async () => {
  api = await startTestApi({ listen: false, config: { auth: { mode: 'local' } } });
  admin = await api.issueKey('admin');
  operator = await api.issueKey('operator', 'ops-lead');
});
afterEach(async () => {
  await api.close();
});

const revocation = (name: string, version: string, seq: number): Revocation => ({ seq, name, version, reason: 'uploads claim documents to a third party', revoked_at: '2026-11-25T10:00:00.000Z' });
const installed = async () => (await api.request('GET', '/catalog/installed', { token: admin })).body.packages as Array<Record<string, unknown>>;

async function installIntake(activate: boolean): Promise<string> {
  const res = await api.request('POST', '/catalog/install', { token: admin, body: { path: example('claims-intake'), activate } });
  expect(res.status).toBe(201);
  return res.body.installed.at(-1).id as string;
}

describe('revocations over the api', () => {
  it('shows the revocation in /catalog/installed and refuses activation until an audited override', async () => {
    const agent = await installIntake(true);
    expect(await api.deps.revocations.apply(revocation('claims-intake', '1.0.0', 1), KEY_ID)).toMatchObject({ status: 'applied', agents_suspended: [agent] });

    const packages = await installed();
    expect(packages.find((p) => p.name === 'claims-intake')).toEqual({
      name: 'claims-intake',
      type: 'agent-template',
      version: '1.0.0',
      title: 'Claims intake',
      installed_at: expect.any(String),
      source: 'path',
      revoked: true,
      revocation: { version: '1.0.0', reason: 'uploads claim documents to a third party', revoked_at: '2026-11-25T10:00:00.000Z', seq: 1, override: null },
    });
    expect(packages.find((p) => p.name === 'fnol-triage')).toMatchObject({ revoked: false, revocation: null });
    expect((await api.request('GET', `/agents/${agent}`, { token: admin })).body.state).toBe('Suspended');

    const refused = await api.request('POST', `/agents/${agent}/activate`, { token: operator });
    expect(refused.status).toBe(500);
    expect(refused.body.error.category).toBe('ActivationError');
    expect(refused.body.error.message).toContain('package claims-intake 1.0.0 was revoked');
    expect(refused.body.error.message).toContain(`POST ${ROUTE}`);

    // Role, body and name are checked before anything changes.
    expect((await api.request('POST', ROUTE, { token: await api.issueKey('developer'), body: { reason: 'I need it' } })).status).toBe(403);
    for (const body of [{}, { reason: '' }, { reason: 'fine', force: true }, { reason: 'x'.repeat(501) }]) {
      const bad = await api.request('POST', ROUTE, { token: operator, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.category).toBe('ValidationError');
    }
    const unknown = await api.request('POST', '/catalog/installed/policy-servicing/override-revocation', { token: operator, body: { reason: 'not revoked at all' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.category).toBe('NotFound');
    expect((await installed()).find((p) => p.name === 'claims-intake')?.revocation).toMatchObject({ override: null });
    expect((await api.request('POST', `/agents/${agent}/activate`, { token: operator })).status).toBe(500);

    const override = await api.request('POST', ROUTE, { token: operator, body: { reason: 'vendor advisory 2026-11: false positive' } });
    expect(override.status).toBe(200);
    expect(override.body).toEqual({
      name: 'claims-intake',
      revocations: [{ version: '1.0.0', reason: 'uploads claim documents to a third party', revoked_at: '2026-11-25T10:00:00.000Z', seq: 1, override: { reason: 'vendor advisory 2026-11: false positive', by: 'ops-lead', at: expect.any(String) } }],
    });
    // The override reactivates nothing by itself.
    expect((await api.request('GET', `/agents/${agent}`, { token: admin })).body.state).toBe('Suspended');
    const trail = (await api.request('GET', '/security/audit?category=agents&limit=50', { token: admin })).body.entries as Array<Record<string, unknown>>;
    expect(trail.find((e) => e.action === 'package.revocation.override')).toMatchObject({
      identity: 'ops-lead',
      role: 'operator',
      target: 'claims-intake',
      metadata: { reason: 'vendor advisory 2026-11: false positive', versions: ['1.0.0'] },
    });
    expect(trail.find((e) => e.action === 'POST /catalog/installed/:name/override-revocation' && e.result === '200')).toBeDefined();
    expect(trail.filter((e) => e.action === 'package.revoked')).toEqual([expect.objectContaining({ identity: `registry:${KEY_ID}`, target: 'claims-intake@1.0.0' })]);

    expect((await api.request('POST', `/agents/${agent}/activate`, { token: operator })).status).toBe(200);
    expect((await api.request('GET', `/agents/${agent}`, { token: admin })).body.state).toBe('Running');
  });

  it('refuses to install a revoked version, by path, naming the revocation and the override route', async () => {
    await api.deps.revocations.apply(revocation('fnol-triage', '1.0.0', 4), KEY_ID);
    const res = await api.request('POST', '/catalog/install', { token: admin, body: { path: example('claims-intake') } });
    expect(res.status).toBe(400);
    expect(res.body.error.category).toBe('CatalogError');
    expect(res.body.error.message).toContain('package fnol-triage 1.0.0 was revoked by the registry (feed seq 4');
    expect(res.body.error.details.revoked).toEqual([expect.objectContaining({ name: 'fnol-triage', version: '1.0.0', override_route: '/catalog/installed/fnol-triage/override-revocation' })]);
    expect(await installed()).toEqual([]);

    expect((await api.request('POST', '/catalog/installed/fnol-triage/override-revocation', { token: operator, body: { reason: 'rebuilt from audited source' } })).status).toBe(200);
    const again = await api.request('POST', '/catalog/install', { token: admin, body: { path: example('claims-intake'), activate: true } });
    expect(again.status).toBe(201);
    expect((await installed()).find((p) => p.name === 'fnol-triage')).toMatchObject({ revoked: true, revocation: { override: { by: 'ops-lead' } } });
  });
});
