import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gate } from '@agent-platform/testkit';
import type { PlatformConfig } from '@agent-platform/contracts';
import { startTestApi, type DeepPartial, type TestApi } from '../testing/index.ts';

const LOCAL: DeepPartial<PlatformConfig> = { auth: { mode: 'local' } };

interface RawDb {
  prepare(sql: string): { run(...p: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

let api: TestApi | null = null;
const scratch: string[] = [];

async function start(config: DeepPartial<PlatformConfig> = LOCAL): Promise<TestApi> {
  api = await startTestApi({ config });
  return api;
}

afterEach(async () => {
  await api?.close();
  api = null;
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

function dbPath(t: TestApi): string {
  return join(t.dataDir, 'data', 'platform.db');
}

describe('GET /security/status', () => {
  it('reports audit, auth mode and TLS', async () => {
    const t = await start();
    const admin = await t.issueKey('admin', 'root');
    await t.request('POST', '/audit/append', { token: admin, body: { event_type: 'one' } });
    const res = await t.request('GET', '/security/status', { token: admin });
    expect(res.status).toBe(200);
    // The append writes two entries: the event and the request that carried it.
    expect(res.body).toEqual({
      audit_enabled: true,
      audit_entries: 2,
      auth_mode: 'api-key',
      tls_enabled: false,
    });
  });

  it('says none for auth mode disabled and sees native TLS', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ap-sec-tls-'));
    scratch.push(dir);
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
      ],
      {
        stdio: 'ignore',
      },
    );
    const t = await start({ server: { tls: { cert_file: cert, key_file: key } } });
    expect((await t.request('GET', '/security/status')).body).toMatchObject({
      auth_mode: 'none',
      tls_enabled: true,
    });
  });
});

describe('GET /security/audit', () => {
  it('lists an entry for every mutating request, newest first, with who, what and the outcome', async () => {
    const t = await start();
    const admin = await t.issueKey('admin', 'root');
    const viewer = await t.issueKey('viewer', 'looker');
    expect(
      (await t.request('PUT', '/vault/db-password', { token: admin, body: { value: 'pw' } })).status,
    ).toBe(200);
    expect((await t.request('DELETE', '/vault/absent', { token: admin })).status).toBe(404);
    expect((await t.request('PUT', '/vault/x', { token: viewer, body: { value: 'pw' } })).status).toBe(403);
    expect((await t.request('GET', '/vault', { token: admin })).status).toBe(200);

    const res = await t.request('GET', '/security/audit', { token: admin });
    expect(res.status).toBe(200);
    const entries = res.body.entries as Array<Record<string, unknown>>;
    expect(entries.map((e) => [e.category, e.identity, e.role, e.action, e.target, e.result])).toEqual([
      ['access', 'looker', 'viewer', 'PUT /vault/:key', '/vault/x', '403'],
      ['vault', 'root', 'admin', 'DELETE /vault/:key', '/vault/absent', '404'],
      ['vault', 'root', 'admin', 'PUT /vault/:key', '/vault/db-password', '200'],
    ]);
    expect(entries.map((e) => e.seq)).toEqual([3, 2, 1]);
    for (const e of entries) {
      expect(e.id).toBe(e.seq);
      expect(e.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(e.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('filters by category, actor and since', async () => {
    const t = await start();
    const admin = await t.issueKey('admin', 'root');
    const other = await t.issueKey('admin', 'second');
    await t.request('PUT', '/vault/a', { token: admin, body: { value: 'v' } });
    await t.request('POST', '/audit/append', { token: other, body: { event_type: 'manual' } });
    const q = async (query: string): Promise<Array<Record<string, unknown>>> => {
      const res = await t.request('GET', `/security/audit?${query}`, { token: admin });
      expect(res.status).toBe(200);
      return res.body.entries;
    };
    expect((await q('category=vault')).map((e) => e.action)).toEqual(['PUT /vault/:key']);
    expect((await q('actor=second')).map((e) => e.action)).toEqual([
      'POST /audit/append',
      'audit.append:manual',
    ]);
    expect(await q('actor=nobody')).toEqual([]);
    expect(await q('since=2999-01-01T00:00:00Z')).toEqual([]);
    expect(await q('since=2000-01-01')).toHaveLength(3);
    expect((await q('category=audit&actor=second&limit=1')).map((e) => e.action)).toEqual([
      'POST /audit/append',
    ]);
  });

  it('returns 20 entries by default and refuses a limit over the configured maximum', async () => {
    const t = await start({ ...LOCAL, audit: { max_query_limit: 30 } });
    const admin = await t.issueKey('admin');
    for (let i = 0; i < 13; i++)
      await t.request('POST', '/audit/append', { token: admin, body: { event_type: `e${i}` } });
    expect((await t.request('GET', '/security/audit', { token: admin })).body.entries).toHaveLength(20);
    expect((await t.request('GET', '/security/audit?limit=30', { token: admin })).body.entries).toHaveLength(
      26,
    );
    const over = await t.request('GET', '/security/audit?limit=31', { token: admin });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ category: 'ValidationError', details: { maximum: 30 } });
    expect(over.body.error.message).toContain('at most 30');
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['category=nope', 'auth, access, keys, vault, config, audit, system, agents, workflows, tools, integrations, channels, request'],
    ['since=yesterday', 'since'],
    ['since=2026-03-01T25:00:00Z', 'since'],
  ])('answers 400 ValidationError for %s', async (query, mention) => {
    const t = await start();
    const admin = await t.issueKey('admin');
    const res = await t.request('GET', `/security/audit?${query}`, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.error.category).toBe('ValidationError');
    expect(res.body.error.message).toContain(mention);
  });

  it('is for admins and auditors only (SecurityAudit)', async () => {
    const t = await start();
    expect((await t.request('GET', '/security/audit', { token: await t.issueKey('auditor') })).status).toBe(
      200,
    );
    for (const role of ['operator', 'viewer', 'developer', 'service'] as const) {
      const res = await t.request('GET', '/security/audit', { token: await t.issueKey(role) });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
  });
});

describe('GET /security/verify', () => {
  it('reports a valid chain, then names the first entry edited in the database file', async () => {
    const t = await start();
    const admin = await t.issueKey('admin');
    for (let i = 0; i < 5; i++)
      await t.request('PUT', `/vault/k${i}`, { token: admin, body: { value: 'v' } });
    const ok = await t.request('GET', '/security/verify', { token: await t.issueKey('operator') });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      valid: true,
      entry_count: 5,
      algorithm: 'sha256',
      integrity_excludes: ['id'],
    });
    expect(ok.body.chain_anchor).toBe(`sha256:${'0'.repeat(64)}`);
    expect(ok.body.integrity_covers).toEqual([
      'prev_hash',
      'seq',
      'timestamp',
      'category',
      'identity',
      'role',
      'action',
      'target',
      'result',
      'metadata_hash',
    ]);
    expect(ok.body.verification_note).toContain('length-prefixed');
    expect(ok.body.first_invalid_seq).toBeUndefined();

    const db = new Database(dbPath(t));
    db.prepare(`UPDATE l_audit SET body = json_set(body, '$.result', '500') WHERE seq = 3`).run();
    db.close();
    // A full walk re-hashes every entry (the default walk starts after what this process verified).
    const broken = await t.request('GET', '/security/verify?full=true', { token: admin });
    expect(broken.status).toBe(200);
    expect(broken.body).toMatchObject({ valid: false, first_invalid_seq: 3, verified_from_seq: 1 });
    expect(broken.body.first_invalid_reason).toContain('hash mismatch');
  });

  it('keeps serving other requests while it walks a long chain (issue "Hardening" 9)', async () => {
    const t = await start();
    const admin = await t.issueKey('admin');
    for (let batch = 0; batch < 30; batch++) {
      await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          t.deps.audit.record({ category: 'system', identity: 'test', role: 'admin', action: `fill ${batch}-${i}`, target: 't', result: 'ok' }),
        ),
      );
    }
    const walking = gate();
    const verify = t.deps.audit.verify.bind(t.deps.audit);
    t.deps.audit.verify = (options) => (walking.open(), verify(options));
    const order: string[] = [];
    const verified = t.request('GET', '/security/verify?full=true', { token: admin }).then((r) => (order.push('verify'), r));
    await walking.promise;
    const health = t.request('GET', '/health').then((r) => (order.push('health'), r));
    const [v, h] = await Promise.all([verified, health]);
    expect(v.body).toMatchObject({ valid: true, entry_count: 30_000, checked_entries: 30_000 });
    expect(h.status).toBe(200);
    expect(order).toEqual(['health', 'verify']);
  });

  it('re-hashes only the entries added since the last verification, and all of them with full=true', async () => {
    const t = await start();
    const admin = await t.issueKey('admin');
    for (let i = 0; i < 5; i++) await t.request('PUT', `/vault/k${i}`, { token: admin, body: { value: 'v' } });
    const first = await t.request('GET', '/security/verify', { token: admin });
    expect(first.body).toMatchObject({ valid: true, entry_count: 5, verified_from_seq: 1, checked_entries: 5 });
    for (let i = 0; i < 3; i++) await t.request('PUT', `/vault/n${i}`, { token: admin, body: { value: 'v' } });
    const next = await t.request('GET', '/security/verify', { token: admin });
    expect(next.body).toMatchObject({ valid: true, entry_count: 8, verified_from_seq: 6, checked_entries: 3 });
    expect(next.body.verification_note).toContain('full=true');
    const full = await t.request('GET', '/security/verify?full=true', { token: admin });
    expect(full.body).toMatchObject({ valid: true, entry_count: 8, verified_from_seq: 1, checked_entries: 8 });
    // An edit of the entry the last walk ended on is caught without a full walk.
    const db = new Database(dbPath(t));
    db.prepare(`UPDATE l_audit SET body = json_set(body, '$.result', '500') WHERE seq = 8`).run();
    db.close();
    expect((await t.request('GET', '/security/verify', { token: admin })).body).toMatchObject({ valid: false, first_invalid_seq: 8 });
  });

  it('keeps the chain gapless and valid under 200 parallel mutating requests', async () => {
    const t = await start();
    const admin = await t.issueKey('admin');
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        t.request('POST', '/audit/append', { token: admin, body: { event_type: `burst-${i}` } }),
      ),
    );
    expect(responses.every((r) => r.status === 201)).toBe(true);
    const verify = await t.request('GET', '/security/verify', { token: admin });
    expect(verify.body).toMatchObject({ valid: true, entry_count: 400 });
    const entries = (await t.request('GET', '/security/audit?limit=1000', { token: admin })).body
      .entries as Array<{ seq: number }>;
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 400 }, (_, i) => 400 - i));
  });
});

describe('POST /audit/append', () => {
  it('records the event with its type, agent and detail', async () => {
    const t = await start();
    const admin = await t.issueKey('admin', 'root');
    const res = await t.request('POST', '/audit/append', {
      token: admin,
      body: { event_type: 'claim.reviewed', agent_id: 'agent-7', detail: 'approved by hand' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'recorded', event_type: 'claim.reviewed' });
    await t.request('POST', '/audit/append', { token: admin, body: { event_type: 'bare' } });

    const entries = (await t.request('GET', '/security/audit?category=audit', { token: admin })).body
      .entries as Array<Record<string, unknown>>;
    const manual = entries.filter((e) => String(e.action).startsWith('audit.append:'));
    expect(manual).toEqual([
      expect.objectContaining({
        action: 'audit.append:bare',
        target: '-',
        metadata: null,
        identity: 'root',
        role: 'admin',
        result: 'recorded',
      }),
      expect.objectContaining({
        action: 'audit.append:claim.reviewed',
        target: 'agent-7',
        metadata: { detail: 'approved by hand' },
      }),
    ]);
  });

  it.each([
    [{}, 400, 'event_type'],
    [{ event_type: '' }, 400, 'event_type'],
    [{ event_type: 'x'.repeat(129) }, 400, 'event_type'],
    [{ event_type: 'x', detail: 'd'.repeat(4097) }, 400, 'detail'],
    [{ event_type: 'x', details: 'typo' }, 400, 'details'],
    [{ event_type: 5 }, 422, 'event_type'],
  ])('refuses %j', async (body, status, mention) => {
    const t = await start();
    const admin = await t.issueKey('admin');
    const res = await t.request('POST', '/audit/append', { token: admin, body });
    expect(res.status).toBe(status);
    expect(res.body.error.message).toContain(mention);
  });

  it('is admin only (AuditWrite)', async () => {
    const t = await start();
    const res = await t.request('POST', '/audit/append', {
      token: await t.issueKey('auditor'),
      body: { event_type: 'x' },
    });
    expect(res.status).toBe(403);
  });
});

describe('with audit disabled', () => {
  it('records nothing and answers the disabled shapes', async () => {
    const t = await start({ audit: { enabled: false } });
    await t.request('PUT', '/vault/k', { body: { value: 'v' } });
    expect((await t.request('GET', '/security/status')).body).toMatchObject({
      audit_enabled: false,
      audit_entries: 0,
    });
    expect((await t.request('GET', '/security/audit')).body).toEqual({ entries: [] });
    const verify = await t.request('GET', '/security/verify');
    expect(verify.status).toBe(200);
    expect(verify.body).toEqual({
      valid: null,
      status: 'disabled',
      reason: expect.stringContaining('disabled'),
    });
    const append = await t.request('POST', '/audit/append', { body: { event_type: 'x' } });
    expect(append.status).toBe(409);
    expect(append.body.error.message).toContain('disabled');
  });
});
