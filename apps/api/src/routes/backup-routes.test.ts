import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

const example = (name: string) => fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));

let api: TestApi;
let admin: string;

beforeEach(async () => {
  api = await startTestApi({ config: { auth: { mode: 'local' } } });
  admin = await api.issueKey('admin', 'root');
});
afterEach(async () => {
  await api.close();
});

const post = (path: string, body: unknown, token = admin) => api.request('POST', path, { token, body });
const get = (path: string, token = admin) => api.request('GET', path, { token });

async function installAgent(): Promise<string> {
  const res = await post('/catalog/install', { path: example('claims-intake'), activate: true });
  expect(res.status).toBe(201);
  return res.body.installed.at(-1).id as string;
}

async function memoryOf(agent: string): Promise<Record<string, string>> {
  const res = await get(`/agents/${agent}/memory`);
  return Object.fromEntries(
    (res.body.entries as Array<{ key: string; value: string }>).map((e) => [e.key, e.value]),
  );
}

describe('backup routes', () => {
  it('viewers and developers are refused 403 (even with a wrong content type), operators may back up and restore', async () => {
    for (const role of ['viewer', 'developer'] as const) {
      const token = await api.issueKey(role, `a-${role}`);
      expect((await post('/backup/create', { scope: 'full' }, token)).status).toBe(403);
      expect((await get('/backup/list', token)).status).toBe(403);
      expect((await post('/backup/restore', { id: '20260101T000000000Z-00000000' }, token)).status).toBe(403);
      const upload = await api.request('POST', '/backup/upload', {
        token,
        body: 'x',
        headers: { 'content-type': 'text/plain' },
      });
      expect(upload.status).toBe(403);
    }
    const operator = await api.issueKey('operator', 'ops');
    const made = await post('/backup/create', { scope: 'full' }, operator);
    expect(made.status).toBe(200);
    expect((await get('/backup/list', operator)).body.backups).toHaveLength(1);
    expect((await post('/backup/restore', { id: made.body.id }, operator)).status).toBe(200);
  });

  it('creates an archive under the data dir with its checksum and size, and lists it newest first', async () => {
    const first = await post('/backup/create', { scope: 'full' });
    expect(first.status).toBe(200);
    const second = await post('/backup/create', { scope: 'agents_only' });
    const { id, path, checksum, size_bytes } = first.body;
    expect(path).toBe(join(api.dataDir, 'data', 'backups', `${id}.tar.gz`));
    const bytes = await readFile(path);
    expect(size_bytes).toBe(bytes.length);
    expect(checksum).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
    expect(Object.keys(first.body).sort()).toEqual(
      [
        'audit_entry_count',
        'checksum',
        'created_at',
        'documents',
        'id',
        'installation_id',
        'path',
        'platform_version',
        'scope',
        'size_bytes',
      ].sort(),
    );
    expect((await get('/backup/list')).body.backups.map((b: { id: string }) => b.id)).toEqual([
      second.body.id,
      id,
    ]);
    // Nothing else is left in the backups directory: no partial file, no SQLite side file.
    expect((await readdir(join(api.dataDir, 'data', 'backups'))).sort()).toEqual(
      [
        `${id}.tar.gz`,
        `${id}.tar.gz.sha256`,
        `${second.body.id}.tar.gz`,
        `${second.body.id}.tar.gz.sha256`,
      ].sort(),
    );
    expect((await post('/backup/create', {})).status).toBe(400);
    expect((await post('/backup/create', { scope: 'everything' })).status).toBe(400);
    // The audit trail records who made which backup.
    const entries = (await get('/security/audit?category=system&limit=10')).body.entries as Array<{
      action: string;
      target: string;
    }>;
    expect(entries.filter((e) => e.action === 'backup.create').map((e) => e.target)).toEqual([
      second.body.id,
      id,
    ]);
  });

  it('a full restore by id puts the running platform back as it was: keys, vault, agents, audit chain', async () => {
    const agent = await installAgent();
    await api.request('PUT', `/agents/${agent}/memory/policy`, { token: admin, body: { value: 'P-1' } });
    await api.request('PUT', '/vault/crm-key', { token: admin, body: { value: 'sealed-1' } });
    const oldKey = (await post('/auth/keys', { name: 'before', role: 'viewer' })).body.secret as string;
    const made = (await post('/backup/create', { scope: 'full' })).body;

    const newKey = (await post('/auth/keys', { name: 'after', role: 'viewer' })).body.secret as string;
    await api.request('PUT', '/vault/later', { token: admin, body: { value: 'sealed-2' } });
    await api.request('PUT', `/agents/${agent}/memory/policy`, { token: admin, body: { value: 'P-2' } });
    await post(`/agents/${agent}/suspend`, undefined);

    const restored = await post('/backup/restore', { id: made.id, checksum: made.checksum });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({
      status: 'restored',
      id: made.id,
      scope: 'full',
      created_at: made.created_at,
      checkpoint: null,
    });
    expect(restored.body.audit_entry_count).toBe(made.audit_entry_count + 1);

    expect((await get('/auth/whoami', oldKey)).status).toBe(200);
    expect((await get('/auth/whoami', newKey)).status).toBe(401);
    expect((await get('/vault')).body.map((e: { key: string }) => e.key)).toEqual(['crm-key']);
    expect(await memoryOf(agent)).toEqual({ policy: 'P-1' });
    expect((await get(`/agents/${agent}`)).body.state).toBe('Running');
    const verify = (await get('/security/verify')).body;
    expect(verify).toMatchObject({ valid: true, verified_from_seq: 1 });
    const actions = (
      (await get('/security/audit?category=system&limit=3')).body.entries as Array<{ action: string }>
    ).map((e) => e.action);
    expect(actions.slice(0, 2)).toEqual(['POST /backup/restore', 'backup.restore']);
  });

  it('with a checkpoint sink: a restore the latest checkpoint still covers gets a fresh one; an older one waits for an acknowledged supersede', async () => {
    const sink = join(api.dataDir, 'sink');
    const anchored = await startTestApi({
      config: { auth: { mode: 'local' }, audit: { checkpoints: { sink } } },
    });
    try {
      const token = await anchored.issueKey('admin', 'root');
      const request = (method: string, path: string, body?: unknown) =>
        anchored.request(method, path, { token, body });
      const old = (await request('POST', '/backup/create', { scope: 'full' })).body;
      expect((await request('POST', '/security/checkpoints')).status).toBe(201);
      const recent = (await request('POST', '/backup/create', { scope: 'full' })).body;
      for (const event_type of ['one', 'two', 'three'])
        await request('POST', '/audit/append', { event_type });

      // The recent backup still reaches the latest checkpoint: the restore writes one of the restored chain.
      const first = (await request('POST', '/backup/restore', { id: recent.id })).body;
      expect(first.checkpoint).toMatch(new RegExp(`^checkpoints/.*-${first.audit_entry_count}\\.json$`));
      expect((await request('GET', '/security/verify')).body).toMatchObject({
        valid: true,
        checkpoint_status: 'verified',
      });

      // The old one is shorter than the latest checkpoint: verify says so, and no checkpoint papers over
      // it until an admin or auditor supersedes it with a reason (docs/audit.md "When verify fails").
      const second = (await request('POST', '/backup/restore', { id: old.id })).body;
      expect(second.checkpoint).toBeNull();
      expect((await request('GET', '/security/verify')).body).toMatchObject({
        valid: false,
        checkpoint_status: 'failed',
      });
      const superseded = await request('POST', '/security/checkpoints', {
        supersede_reason: `restored backup ${old.id}`,
      });
      expect(superseded.status).toBe(201);
      expect((await request('GET', '/security/verify')).body).toMatchObject({
        valid: true,
        checkpoint_status: 'verified',
      });
    } finally {
      await anchored.close();
    }
  });

  it('an agents_only restore brings the agents back and leaves keys and the vault as they are', async () => {
    const agent = await installAgent();
    await api.request('PUT', `/agents/${agent}/memory/policy`, { token: admin, body: { value: 'P-1' } });
    const made = (await post('/backup/create', { scope: 'agents_only' })).body;
    const newKey = (await post('/auth/keys', { name: 'after', role: 'viewer' })).body.secret as string;
    await api.request('PUT', '/vault/later', { token: admin, body: { value: 'sealed-2' } });
    await api.request('PUT', `/agents/${agent}/memory/policy`, { token: admin, body: { value: 'P-2' } });
    await api.request('PUT', `/agents/${agent}/memory/extra`, { token: admin, body: { value: 'E' } });

    expect((await post('/backup/restore', { id: made.id })).body).toMatchObject({
      scope: 'agents_only',
      audit_entry_count: null,
    });
    expect(await memoryOf(agent)).toEqual({ policy: 'P-1' });
    expect((await get('/auth/whoami', newKey)).status).toBe(200);
    expect((await get('/vault')).body.map((e: { key: string }) => e.key)).toEqual(['later']);
  });

  it('refuses bad restore requests and a damaged archive with a clear error, changing nothing', async () => {
    const made = (await post('/backup/create', { scope: 'full' })).body;
    const later = (await post('/auth/keys', { name: 'later', role: 'viewer' })).body.secret as string;
    expect((await post('/backup/restore', {})).status).toBe(400);
    expect((await post('/backup/restore', { id: made.id, path: made.path })).status).toBe(400);
    expect((await post('/backup/restore', { id: '20200101T000000000Z-00000000' })).body.error).toMatchObject({
      category: 'NotFound',
    });
    expect((await post('/backup/restore', { path: 'backups/x.tar.gz' })).status).toBe(400);
    expect((await post('/backup/restore', { id: 'not-an-id' })).status).toBe(400);

    const bytes = await readFile(made.path);
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 20]! ^= 0x01;
    await writeFile(made.path, flipped);
    const refused = await post('/backup/restore', { id: made.id });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(
      /damaged or not a backup: its checksum differs from the sha256:[0-9a-f]+ recorded when it was made/,
    );
    expect((await get('/auth/whoami', later)).status).toBe(200);
  });

  it('takes an uploaded archive (application/gzip) and restores it by id; refuses another content type with 415', async () => {
    const made = (await post('/backup/create', { scope: 'full' })).body;
    const bytes = await readFile(made.path);
    const other = await startTestApi({ config: { auth: { mode: 'local' } }, env: {} });
    try {
      const token = await other.issueKey('operator', 'ops');
      const wrongType = await other.request('POST', '/backup/upload', {
        token,
        body: bytes,
        headers: { 'content-type': 'application/json' },
      });
      expect(wrongType.status).toBe(415);
      const uploaded = await other.request('POST', `/backup/upload?checksum=${made.checksum}`, {
        token,
        body: bytes,
        headers: { 'content-type': 'application/gzip' },
      });
      expect(uploaded.status).toBe(201);
      expect(uploaded.body).toMatchObject({
        id: made.id,
        checksum: made.checksum,
        path: join(other.dataDir, 'data', 'backups', `${made.id}.tar.gz`),
      });
      // A foreign restore is an admin's (BackupRestoreForeign): an operator is refused before anything is read.
      const byOperator = await other.request('POST', '/backup/restore', {
        token,
        body: { id: made.id, allow_foreign: true },
      });
      expect(byOperator.status).toBe(403);
      expect(byOperator.body.error.category).toBe('PermissionDenied');
      // Another platform, another vault key: the archive is foreign there.
      const foreign = await other.request('POST', '/backup/restore', {
        token: await other.issueKey('admin', 'root'),
        body: { id: made.id, allow_foreign: true },
      });
      expect(foreign.status).toBe(409);
      expect(foreign.body.error.message).toMatch(/made with another vault key/);
    } finally {
      await other.close();
    }
  });
});
