import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformConfig } from '@agent-platform/contracts';
import { startTestApi, type DeepPartial, type TestApi, type TestResponse } from '../testing/index.ts';

const LOCAL: DeepPartial<PlatformConfig> = { auth: { mode: 'local' } };

let api: TestApi | null = null;
const scratch: string[] = [];

async function start(options: Parameters<typeof startTestApi>[0] = { config: LOCAL }): Promise<TestApi> {
  api = await startTestApi(options);
  return api;
}

afterEach(async () => {
  await api?.close();
  api = null;
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('vault routes', () => {
  it('stores, lists (names only, sorted), rotates and deletes', async () => {
    const t = await start();
    const admin = await t.issueKey('admin');
    const put = await t.request('PUT', '/vault/openai-key', { token: admin, body: { value: 'value-A' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ key: 'openai-key', stored_at: expect.stringMatching(/Z$/) });
    await t.request('PUT', '/vault/crm.token', { token: admin, body: { value: 'crm' } });
    expect(await t.deps.vault.resolve('openai-key')).toBe('value-A');

    // Rotation: the next resolution sees the new value, no restart.
    expect(
      (await t.request('PUT', '/vault/openai-key', { token: admin, body: { value: 'value-B' } })).status,
    ).toBe(200);
    expect(await t.deps.vault.resolve('openai-key')).toBe('value-B');

    const list = await t.request('GET', '/vault', { token: admin });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((e: { key: string }) => e.key)).toEqual(['crm.token', 'openai-key']);
    expect(Object.keys(list.body[0]).sort()).toEqual(['key', 'stored_at']);

    const del = await t.request('DELETE', '/vault/openai-key', { token: admin });
    expect(del.status).toBe(204);
    expect(del.body).toBe('');
    const again = await t.request('DELETE', '/vault/openai-key', { token: admin });
    expect(again.status).toBe(404);
    expect(again.body.error.category).toBe('NotFound');
    expect(await t.deps.vault.resolve('openai-key')).toBeNull();
  });

  it('has no way to read a value back', async () => {
    const t = await start();
    const admin = await t.issueKey('admin');
    await t.request('PUT', '/vault/k', { token: admin, body: { value: 'v' } });
    expect((await t.request('GET', '/vault/k', { token: admin })).status).toBe(404);
  });

  it.each([
    ['/vault/has%20space', { value: 'v' }, 400],
    [`/vault/${'x'.repeat(129)}`, { value: 'v' }, 400],
    ['/vault/ok', {}, 400],
    ['/vault/ok', { value: '' }, 400],
    ['/vault/ok', { value: 5 }, 422],
    ['/vault/ok', { value: 'v', extra: 1 }, 400],
  ])('refuses PUT %s %j', async (path, body, status) => {
    const t = await start();
    const res = await t.request('PUT', path, { token: await t.issueKey('admin'), body });
    expect(res.status).toBe(status);
  });

  it('accepts key names of 128 characters', async () => {
    const t = await start();
    const name = `k.${'x'.repeat(124)}_-`;
    const res = await t.request('PUT', `/vault/${name}`, {
      token: await t.issueKey('admin'),
      body: { value: 'v' },
    });
    expect(res.status).toBe(200);
    expect(res.body.key).toBe(name);
  });

  it('is admin only', async () => {
    const t = await start();
    for (const role of ['operator', 'auditor', 'viewer'] as const) {
      const token = await t.issueKey(role);
      expect((await t.request('GET', '/vault', { token })).status).toBe(403);
      expect((await t.request('PUT', '/vault/k', { token, body: { value: 'v' } })).status).toBe(403);
      expect((await t.request('DELETE', '/vault/k', { token })).status).toBe(403);
    }
  });

  it('keeps the audit chain gapless under 200 parallel PUTs', async () => {
    const t = await start();
    const admin = await t.issueKey('admin');
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        t.request('PUT', `/vault/k${i}`, { token: admin, body: { value: `v${i}` } }),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect((await t.request('GET', '/vault', { token: admin })).body).toHaveLength(200);
    expect((await t.request('GET', '/security/verify', { token: admin })).body).toMatchObject({
      valid: true,
      entry_count: 200,
    });
    const seqs = (
      (await t.request('GET', '/security/audit?limit=500&category=vault', { token: admin })).body
        .entries as Array<{ seq: number }>
    ).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => 200 - i));
  });
});

describe('a stored secret never leaks', () => {
  it('appears in no response, no log line, no audit entry, no metric and not in the data files', async () => {
    const canary = 'CANARY-9f3e1d-hunter2';
    const dir = await mkdtemp(join(tmpdir(), 'ap-vault-leak-'));
    scratch.push(dir);
    const t = await start({ config: LOCAL, dataDir: dir });
    const admin = await t.issueKey('admin');
    const seen: TestResponse[] = [];
    const call = async (method: string, path: string, body?: unknown): Promise<TestResponse> => {
      const res = await t.request(method, path, { token: admin, ...(body === undefined ? {} : { body }) });
      seen.push(res);
      return res;
    };
    expect((await call('PUT', '/vault/payments', { value: canary })).status).toBe(200);
    // Failing writes carrying the secret must not echo it either.
    await call('PUT', '/vault/bad%20name', { value: canary });
    await call('PUT', '/vault/payments', { value: canary, note: canary });
    await call('PUT', '/vault/payments', `{"value": "${canary}"`);
    await call('PUT', '/vault/payments', { value: [canary] });
    await call('POST', '/audit/append', { event_type: 'rotation', detail: 'rotated payments' });
    for (const path of [
      '/vault',
      '/security/audit?limit=1000',
      '/security/verify',
      '/security/status',
      '/logs?lines=5000',
      '/metrics',
      '/status',
      '/config',
    ]) {
      expect((await call('GET', path)).status).toBe(200);
    }
    expect(await t.deps.vault.resolve('payments')).toBe(canary);

    for (const res of seen) expect(JSON.stringify(res.body)).not.toContain(canary);
    expect(t.logs().length).toBeGreaterThan(5);
    expect(t.logs().join('\n')).not.toContain(canary);
    const audit = (await t.deps.audit.query({ limit: 1000 })).filter((e) => e.category === 'vault');
    expect(audit.length).toBeGreaterThanOrEqual(4);
    expect(JSON.stringify(audit)).not.toContain(canary);

    await t.close();
    api = null;
    const files = await readdir(dir, { recursive: true, withFileTypes: true });
    const regular = files.filter((f) => f.isFile()).map((f) => join(f.parentPath, f.name));
    expect(regular.some((f) => f.endsWith('platform.db'))).toBe(true);
    for (const file of regular)
      expect((await readFile(file)).includes(Buffer.from(canary)), file).toBe(false);
  });
});

describe('restart durability', () => {
  it('keeps vault entries, audit entries and API keys across a restart on the same data dir', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ap-durable-'));
    scratch.push(dir);
    const t = await start({ config: LOCAL, dataDir: dir });
    const boot = await t.request('POST', '/auth/keys', { body: { name: 'first-admin', role: 'admin' } });
    expect(boot.status).toBe(200);
    const admin = boot.body.secret as string;
    const made = await t.request('POST', '/auth/keys', {
      token: admin,
      body: { name: 'ops', role: 'operator' },
    });
    const operator = made.body.secret as string;
    await t.request('PUT', '/vault/db-password', { token: admin, body: { value: 'before-restart' } });
    await t.request('PUT', '/vault/crm', { token: admin, body: { value: 'crm-secret' } });
    await t.request('POST', '/audit/append', { token: admin, body: { event_type: 'pre', agent_id: 'a1' } });
    const before = await t.request('GET', '/security/verify', { token: admin });
    expect(before.body.valid).toBe(true);
    const vaultBefore = (await t.request('GET', '/vault', { token: admin })).body;

    await t.restart();

    expect((await t.request('GET', '/vault', { token: admin })).body).toEqual(vaultBefore);
    expect(await t.deps.vault.resolve('db-password')).toBe('before-restart');
    expect((await t.request('GET', '/security/status', { token: operator })).body.audit_entries).toBe(
      before.body.entry_count,
    );
    const after = await t.request('GET', '/security/verify', { token: admin });
    expect(after.body).toMatchObject({
      valid: true,
      entry_count: before.body.entry_count,
      tip_hash: before.body.tip_hash,
    });

    // The chain continues from the stored tip, and a rotation is seen at once.
    await t.request('PUT', '/vault/db-password', { token: admin, body: { value: 'after-restart' } });
    expect(await t.deps.vault.resolve('db-password')).toBe('after-restart');
    const final = await t.request('GET', '/security/verify', { token: admin });
    expect(final.body).toMatchObject({ valid: true, entry_count: before.body.entry_count + 1 });
    const [latest] = (await t.request('GET', '/security/audit?limit=1', { token: admin })).body.entries;
    expect(latest).toMatchObject({
      seq: before.body.entry_count + 1,
      identity: 'first-admin',
      action: 'PUT /vault/:key',
    });
    expect(
      (await t.request('GET', '/security/audit?category=audit', { token: admin })).body.entries.map(
        (e: { action: string }) => e.action,
      ),
    ).toContain('audit.append:pre');
  });
});
