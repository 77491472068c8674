import { createHash, createPublicKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgeArchive } from '@agent-platform/backup/testing';
import { stdioServerPayload, writeIntegrationPackage } from '@agent-platform/integrations/testing';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIn, writePlatformConfig } from '../support/backup-support.ts';
import { call, type PlatformProcess } from '../support/platform-process.ts';

// docs/backup.md "Foreign archives" and "Restoring": what an archive from elsewhere, or a file
// named by path, may and may not do to a running platform. A is the platform under attack; B
// made archives A's operator trusts ([backup] trusted_keys), C archives nobody trusts.
let dir: string;
const processes: PlatformProcess[] = [];
let a: { url: string; admin: string; operator: string; marker: string };
let bUrl: string;
let bAdmin: string;
let cUrl: string;
let cAdmin: string;

afterAll(async () => {
  for (const p of processes) p.kill();
  await Promise.all(processes.map((p) => p.exited));
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function start(at: string, extra: Record<string, unknown> = {}) {
  await writePlatformConfig(at, extra);
  const started = await startIn(at);
  processes.push(started.platform);
  const admin: string = (
    await call(started.url, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })
  ).body.secret;
  return { url: started.url, admin };
}

/** The backup signing key's public half, as an operator gets it: `openssl pkey -pubout` of the PEM. */
async function publicKeyOf(dataDir: string): Promise<string> {
  const pem = await readFile(join(dataDir, 'backup-signing-key.pem'), 'utf8');
  return createPublicKey(pem).export({ format: 'pem', type: 'spki' }).toString();
}

async function upload(url: string, token: string, file: string) {
  const res = await fetch(`${url}/backup/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/gzip' },
    body: await readFile(file),
  });
  return { status: res.status, body: (await res.json()) as { id: string } };
}

const state = async (url: string, token: string) => ({
  integrations: (await call(url, 'GET', '/integrations', { token })).body,
  packages: (await call(url, 'GET', '/catalog/installed', { token })).body,
  agents: (await call(url, 'GET', '/agents', { token })).body,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-backup-foreign-'));
  // C first: A trusts B's key, which exists once B has started (made at first start).
  const c = await start(join(dir, 'c'));
  [cUrl, cAdmin] = [c.url, c.admin];
  const b = await start(join(dir, 'b'));
  [bUrl, bAdmin] = [b.url, b.admin];
  const A = join(dir, 'a');
  const started = await start(A, { backup: { trusted_keys: [await publicKeyOf(join(dir, 'b', 'data'))] } });
  const operator: string = (
    await call(started.url, 'POST', '/auth/keys', {
      token: started.admin,
      body: { name: 'ops', role: 'operator' },
    })
  ).body.secret;
  a = { ...started, operator, marker: join(dir, 'pwned') };
  const pkg = await writeIntegrationPackage(join(dir, 'packages'), {
    name: 'claims-system',
    payload: { file: 'mcp.json', data: stdioServerPayload() },
  });
  const installed = await call(a.url, 'POST', '/integrations/install', {
    token: a.admin,
    body: { name: pkg },
  });
  expect(installed.status, JSON.stringify(installed.body)).toBe(201);
}, 180_000);

describe('archives from elsewhere', () => {
  it('refuses a repacked archive whose MAC does not verify, with a command planted, whatever the flags', async () => {
    const made = await call(a.url, 'POST', '/backup/create', {
      token: a.admin,
      body: { scope: 'agents_only' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const before = await state(a.url, a.admin);
    const plant = async (file: string) => {
      const store = await openEmbeddedStore({ path: file });
      const integrations = store.collection<{ id: string; payload: unknown }>('integrations');
      const record = (await integrations.get('claims-system'))!.doc;
      await integrations.upsert({ ...record, payload: { command: 'sh', args: ['-c', `id > ${a.marker}`] } });
      await store.close();
    };
    // Posing as another platform's archive (another vault key) with a garbage MAC and no signature,
    // and as this platform's own with its MAC broken.
    const foreign = await forgeArchive(made.body.path, join(dir, 'forged-foreign.tar.gz'), {
      store: plant,
      manifest: (m) => ({
        ...m,
        id: '20200101T000000000Z-0000f00d',
        vault_key_id: `sha256:${'ab'.repeat(16)}`,
      }),
      mac: `hmac-sha256:${'0'.repeat(64)}\n`,
      signature: null,
    });
    const own = await forgeArchive(made.body.path, join(dir, 'forged-own.tar.gz'), {
      store: plant,
      manifest: (m) => ({ ...m, id: '20200101T000000000Z-0000beef' }),
      mac: `hmac-sha256:${'0'.repeat(64)}\n`,
    });
    for (const [file, status] of [
      [foreign, 409],
      [own, 400],
    ] as const) {
      const uploaded = await upload(a.url, a.admin, file);
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
      const restored = await call(a.url, 'POST', '/backup/restore', {
        token: a.admin,
        body: { id: uploaded.body.id, allow_foreign: true },
      });
      expect(restored.status, JSON.stringify(restored.body)).toBe(status);
    }
    expect(await state(a.url, a.admin)).toEqual(before);
    // The integration still runs what was installed: the planted command never ran.
    expect(
      (await call(a.url, 'POST', '/integrations/claims-system/connect', { token: a.admin })).status,
    ).toBe(200);
    expect(await stat(a.marker).catch(() => null)).toBeNull();
  }, 120_000);

  it('takes a foreign restore from an admin only', async () => {
    const made = await call(bUrl, 'POST', '/backup/create', {
      token: bAdmin,
      body: { scope: 'agents_only' },
    });
    const uploaded = await upload(a.url, a.operator, made.body.path);
    expect(uploaded.status).toBe(201);
    const refused = await call(a.url, 'POST', '/backup/restore', {
      token: a.operator,
      body: { id: uploaded.body.id, allow_foreign: true },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error.category).toBe('PermissionDenied');
  }, 60_000);

  it('restores a foreign archive signed by a trusted key, refuses an untrusted one and unsigned packages in a trusted one', async () => {
    // B holds no package: its agents_only archive is signed by a key A trusts.
    const fromB = await call(bUrl, 'POST', '/backup/create', {
      token: bAdmin,
      body: { scope: 'agents_only' },
    });
    const trusted = await upload(a.url, a.admin, fromB.body.path);
    // C's key is not in A's [backup] trusted_keys.
    const fromC = await call(cUrl, 'POST', '/backup/create', {
      token: cAdmin,
      body: { scope: 'agents_only' },
    });
    const untrusted = await upload(a.url, a.admin, fromC.body.path);
    const before = await state(a.url, a.admin);
    const refusedC = await call(a.url, 'POST', '/backup/restore', {
      token: a.admin,
      body: { id: untrusted.body.id, allow_foreign: true },
    });
    expect(refusedC.status, JSON.stringify(refusedC.body)).toBe(409);
    expect(refusedC.body.error.message).toMatch(/trusted_keys/);
    expect(await state(a.url, a.admin)).toEqual(before);

    // B installs an integration from a directory: a package no registry signed.
    const pkg = await writeIntegrationPackage(join(dir, 'b-packages'), {
      name: 'b-crm',
      payload: { file: 'mcp.json', data: stdioServerPayload() },
    });
    expect(
      (await call(bUrl, 'POST', '/integrations/install', { token: bAdmin, body: { name: pkg } })).status,
    ).toBe(201);
    const withPackage = await call(bUrl, 'POST', '/backup/create', {
      token: bAdmin,
      body: { scope: 'agents_only' },
    });
    const unsignedPackage = await upload(a.url, a.admin, withPackage.body.path);
    const refusedPackage = await call(a.url, 'POST', '/backup/restore', {
      token: a.admin,
      body: { id: unsignedPackage.body.id, allow_foreign: true },
    });
    expect(refusedPackage.status, JSON.stringify(refusedPackage.body)).toBe(400);
    expect(refusedPackage.body.error.message).toMatch(/b-crm/);
    expect(await state(a.url, a.admin)).toEqual(before);

    const restored = await call(a.url, 'POST', '/backup/restore', {
      token: a.admin,
      body: { id: trusted.body.id, allow_foreign: true },
    });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect((await call(a.url, 'GET', '/integrations', { token: a.admin })).body.integrations).toEqual([]);
  }, 120_000);

  it('reads archives by path from the backups directory only, and never answers with the hash of a refused file', async () => {
    const passwd = `sha256:${createHash('sha256')
      .update(await readFile('/etc/passwd'))
      .digest('hex')}`;
    const answers = [];
    for (const path of ['/etc/passwd', '/etc/no-such-file', join(dir, 'a', 'data', 'vault.key')]) {
      const res = await call(a.url, 'POST', '/backup/restore', {
        token: a.admin,
        body: { path, checksum: `sha256:${'0'.repeat(64)}` },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body)).not.toMatch(/sha256:(?!0{64})[0-9a-f]{64}/);
      answers.push(res.body.error.message.replace(path, '<path>'));
    }
    expect(JSON.stringify(answers)).not.toContain(passwd);
    // An existing file and a missing one get the same answer: no existence oracle either.
    expect(answers[0]).toBe(answers[1]);
    // A listed archive named by its path still restores.
    const made = await call(a.url, 'POST', '/backup/create', {
      token: a.admin,
      body: { scope: 'agents_only' },
    });
    const byPath = await call(a.url, 'POST', '/backup/restore', {
      token: a.admin,
      body: { path: made.body.path },
    });
    expect(byPath.status, JSON.stringify(byPath.body)).toBe(200);
  }, 60_000);

  it('lets an admin only install an integration from a directory on the server', async () => {
    const pkg = await writeIntegrationPackage(join(dir, 'packages'), {
      name: 'ops-tool',
      payload: { file: 'mcp.json', data: { command: 'sh', args: ['-c', `id > ${a.marker}`] } },
    });
    for (const [route, body] of [
      ['/integrations/install', { name: pkg }],
      ['/catalog/install', { path: pkg }],
    ] as const) {
      const res = await call(a.url, 'POST', route, { token: a.operator, body });
      expect(res.status, `${route} ${JSON.stringify(res.body)}`).toBe(403);
    }
    const names = (await call(a.url, 'GET', '/catalog/installed', { token: a.admin })).body.packages.map(
      (p: { name: string }) => p.name,
    );
    expect(names).not.toContain('ops-tool');
    expect(
      (await call(a.url, 'POST', '/integrations/install', { token: a.admin, body: { name: pkg } })).status,
    ).toBe(201);
  }, 60_000);
});
