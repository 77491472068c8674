import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

const example = (name: string) => fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let api: TestApi;
let token: string;
let claims: string;
let servicing: string;

beforeEach(async () => {
  api = await startTestApi({ config: { auth: { mode: 'local' } } });
  const admin = await api.issueKey('admin');
  for (const name of ['claims-intake', 'policy-servicing']) {
    const res = await api.request('POST', '/catalog/install', {
      token: admin,
      body: { path: example(name) },
    });
    if (name === 'claims-intake') claims = res.body.installed.at(-1).id;
    else servicing = res.body.installed.at(-1).id;
  }
  // Memory is service work (spec: MemoryRead/MemoryWrite include service).
  token = await api.issueKey('service');
});
afterEach(async () => {
  await api.close();
});

const put = (agent: string, key: string, body: unknown) =>
  api.request('PUT', `/agents/${agent}/memory/${encodeURIComponent(key)}`, { token, body });

describe('memory routes', () => {
  it('creates, overwrites, reads, lists and deletes string values', async () => {
    const created = await put(claims, 'policy_number', { value: 'HO-2231-77' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ key: 'policy_number', value: 'HO-2231-77' });
    expect((await put(claims, 'policy_number', { value: 'HO-2231-78' })).body.value).toBe('HO-2231-78');
    await put(claims, 'claimant name', { value: 'Ana Ruiz' });

    expect((await api.request('GET', `/agents/${claims}/memory/policy_number`, { token })).body).toEqual({
      key: 'policy_number',
      value: 'HO-2231-78',
    });
    expect((await api.request('GET', `/agents/${claims}/memory`, { token })).body).toEqual({
      entries: [
        { key: 'claimant name', value: 'Ana Ruiz' },
        { key: 'policy_number', value: 'HO-2231-78' },
      ],
    });

    const deleted = await api.request('DELETE', `/agents/${claims}/memory/policy_number`, { token });
    expect(deleted.status).toBe(204);
    expect((await api.request('GET', `/agents/${claims}/memory/policy_number`, { token })).status).toBe(404);
    // Deleting an absent key is still 204 (idempotent; docs/agents.md).
    expect((await api.request('DELETE', `/agents/${claims}/memory/policy_number`, { token })).status).toBe(
      204,
    );
  });

  it('takes strings only: any other JSON type is 422', async () => {
    for (const value of [42, true, null, { a: 1 }, ['x']]) {
      const res = await put(claims, 'k', { value });
      expect(res.status).toBe(422);
    }
    expect((await put(claims, 'k', {})).status).toBe(400);
    // The router refuses a path segment over 256 characters before the route runs (docs/agents.md).
    expect((await put(claims, 'x'.repeat(257), { value: 'v' })).status).toBe(414);
    expect((await put(claims, 'x'.repeat(256), { value: 'v' })).status).toBe(200);
    expect(
      (await api.request('DELETE', `/agents/${claims}/memory/${'x'.repeat(256)}`, { token })).status,
    ).toBe(204);
    expect((await api.request('GET', `/agents/${claims}/memory`, { token })).body.entries).toEqual([]);
  });

  it('isolates agents: the path id is the only scope', async () => {
    await put(claims, 'policy_number', { value: 'HO-1' });
    await put(servicing, 'policy_number', { value: 'AU-2' });
    expect((await api.request('GET', `/agents/${claims}/memory/policy_number`, { token })).body.value).toBe(
      'HO-1',
    );
    expect(
      (await api.request('GET', `/agents/${servicing}/memory/policy_number`, { token })).body.value,
    ).toBe('AU-2');
    await api.request('DELETE', `/agents/${servicing}/memory/policy_number`, { token });
    expect((await api.request('GET', `/agents/${claims}/memory`, { token })).body.entries).toHaveLength(1);
  });

  it('answers 404 for an unknown agent and 400 for a bad agent id', async () => {
    expect((await api.request('GET', `/agents/${UNKNOWN}/memory`, { token })).status).toBe(404);
    expect((await put(UNKNOWN, 'k', { value: 'v' })).status).toBe(404);
    const bad = await api.request('GET', '/agents/nope/memory/k', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('agent');
  });

  it('refuses viewers', async () => {
    const viewer = await api.issueKey('viewer');
    expect((await api.request('GET', `/agents/${claims}/memory`, { token: viewer })).status).toBe(403);
  });
});
