import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary, startPostgresServer, type PostgresServerHandle } from '@agent-platform/testkit';
import { startTestApi, type TestApi } from '../testing/index.ts';

// POST /backup/create and /backup/restore on [runtime] store = "postgres": the snapshot is the
// PostgreSQL adapter's (libs/store/src/postgres/pg-snapshots.ts), in the embedded format, and the
// archive goes to [backup] dir (a directory every api node of a fleet would mount).
const example = (name: string) => fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));
const missing = ['initdb', 'postgres'].filter((name) => requireBinary(name) === null);

describe.skipIf(missing.length > 0)(`backup routes on PostgreSQL${missing.length > 0 ? ` [SKIPPED: ${missing.join(', ')} not installed]` : ''}`, () => {
  let server: PostgresServerHandle;
  let shared: string;
  let api: TestApi | undefined;

  beforeAll(async () => {
    server = await startPostgresServer();
    shared = await mkdtemp(join(tmpdir(), 'ap-shared-backups-'));
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await server?.dispose();
    if (shared !== undefined) await rm(shared, { recursive: true, force: true });
  });

  it('backs up, then a restore brings back what changed since, keys, vault, memory and audit chain included', async () => {
    const url = await server.createDatabase('agent_platform');
    api = await startTestApi({
      config: { auth: { mode: 'local' }, runtime: { store: 'postgres', postgres_url: url }, backup: { dir: shared } },
    });
    const admin = await api.issueKey('admin', 'root');
    const post = (path: string, body: unknown, token = admin) => api!.request('POST', path, { token, body });
    const get = (path: string, token = admin) => api!.request('GET', path, { token });
    const memoryOf = async (agent: string) =>
      Object.fromEntries(
        ((await get(`/agents/${agent}/memory`)).body.entries as Array<{ key: string; value: string }>).map((e) => [e.key, e.value]),
      );

    const installed = await post('/catalog/install', { path: example('claims-intake'), activate: true });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    const agent = installed.body.installed.at(-1).id as string;
    await api.request('PUT', `/agents/${agent}/memory/policy`, { token: admin, body: { value: 'P-1' } });
    await api.request('PUT', '/vault/crm-key', { token: admin, body: { value: 'sealed-1' } });
    const oldKey = (await post('/auth/keys', { name: 'before', role: 'viewer' })).body.secret as string;

    const made = await post('/backup/create', { scope: 'full' });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    // [backup] dir: the archive is in the shared directory, not under the data dir.
    expect(made.body.path).toBe(join(shared, `${made.body.id}.tar.gz`));
    expect((await readdir(shared)).filter((n) => !n.startsWith('.')).sort()).toEqual([
      `${made.body.id}.tar.gz`,
      `${made.body.id}.tar.gz.sha256`,
    ]);
    expect((await get('/backup/list')).body.backups.map((b: { id: string }) => b.id)).toEqual([made.body.id]);

    const newKey = (await post('/auth/keys', { name: 'after', role: 'viewer' })).body.secret as string;
    await api.request('PUT', '/vault/later', { token: admin, body: { value: 'sealed-2' } });
    await api.request('PUT', `/agents/${agent}/memory/policy`, { token: admin, body: { value: 'P-2' } });
    await post(`/agents/${agent}/suspend`, undefined);

    const restored = await post('/backup/restore', { id: made.body.id, checksum: made.body.checksum });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body).toMatchObject({ status: 'restored', id: made.body.id, scope: 'full' });
    expect(restored.body.audit_entry_count).toBe(made.body.audit_entry_count + 1);

    expect((await get('/auth/whoami', oldKey)).status).toBe(200);
    expect((await get('/auth/whoami', newKey)).status).toBe(401);
    expect((await get('/vault')).body.map((e: { key: string }) => e.key)).toEqual(['crm-key']);
    expect(await memoryOf(agent)).toEqual({ policy: 'P-1' });
    expect((await get(`/agents/${agent}`)).body.state).toBe('Running');
    expect((await get('/security/verify')).body).toMatchObject({ valid: true, verified_from_seq: 1 });
  }, 120_000);
});
