import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { verifyArchiveFile } from '@agent-platform/backup';
import { decodeVaultKey } from '@agent-platform/config';
import { stdioServerPayload, writeIntegrationPackage } from '@agent-platform/integrations/testing';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import {
  auditEntries,
  backupCli,
  startIn,
  stopGracefully,
  writePlatformConfig,
} from '../support/backup-support.ts';
import { call, type PlatformProcess } from '../support/platform-process.ts';

// The backup story of docs/backup.md as an operator lives it, on the all-in-one: a backup taken
// while agents are invoked and keys created, checked offline, then restored into a new data dir
// on a new platform process that has every agent, key, audit entry and vault value of the backup.
const AGENT_PACKAGE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
let dir: string;
const processes: PlatformProcess[] = [];

afterAll(async () => {
  for (const p of processes) p.kill();
  await Promise.all(processes.map((p) => p.exited));
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function start(at: string, env: Record<string, string> = {}) {
  const started = await startIn(at, env);
  processes.push(started.platform);
  return started;
}

const integrationStatus = async (url: string, token: string) =>
  (await call(url, 'GET', '/integrations/crm/status', { token })).body.status as string;

describe('backups on the all-in-one platform', () => {
  it('backs up under load and restores into a new data dir where everything of the backup works', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-backup-e2e-'));
    const A = join(dir, 'a');
    await writePlatformConfig(A);
    const { url, platform } = await start(A);
    const admin: string = (await call(url, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } }))
      .body.secret;
    const installed = await call(url, 'POST', '/catalog/install', {
      token: admin,
      body: { path: AGENT_PACKAGE, activate: true },
    });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    const agent: string = installed.body.installed.at(-1).id;
    await call(url, 'PUT', `/agents/${agent}/memory/policy`, { token: admin, body: { value: 'HO-1' } });
    // A vault value in use: the integration's key, resolved from the vault each time it connects.
    const pkg = await writeIntegrationPackage(join(dir, 'packages'), {
      name: 'crm',
      payload: { file: 'mcp.json', data: stdioServerPayload() },
    });
    expect(
      (
        await call(url, 'POST', '/integrations/install', {
          token: admin,
          body: { name: pkg, key: 'crm-secret' },
        })
      ).status,
    ).toBe(201);
    expect((await call(url, 'POST', '/integrations/crm/connect', { token: admin })).status).toBe(200);
    expect(await integrationStatus(url, admin)).toBe('Running');

    // Load: sends to the agent and key creations, while the backup is taken (bounded loops).
    let loading = true;
    const outcomes: number[] = [];
    const keys: Array<{ secret: string; createdAfter: boolean }> = [];
    let backupDone = false;
    const sender = async (n: number) => {
      for (let i = 0; loading && i < 100; i++) {
        const res = await call(url, 'POST', `/agents/${agent}/send`, {
          token: admin,
          body: { message: `claim ${n}-${i}` },
        });
        outcomes.push(res.status);
      }
    };
    const keyMaker = async () => {
      for (let i = 0; loading && i < 150; i++) {
        const after = backupDone;
        const res = await call(url, 'POST', '/auth/keys', {
          token: admin,
          body: { name: `load-${i}`, role: 'viewer' },
        });
        outcomes.push(res.status);
        keys.push({ secret: res.body.secret, createdAfter: after });
      }
    };
    const load = Promise.all([sender(1), sender(2), keyMaker()]);
    await waitUntil(() => outcomes.length >= 10, { timeoutMs: 30_000, message: 'the load to start' });
    const backup = await call(url, 'POST', '/backup/create', { token: admin, body: { scope: 'full' } });
    backupDone = true;
    await waitUntil(() => keys.some((k) => k.createdAfter), {
      timeoutMs: 30_000,
      message: 'a key made after the backup',
    });
    loading = false;
    await load;
    expect(backup.status, JSON.stringify(backup.body)).toBe(200);
    expect(outcomes.every((s) => s === 200)).toBe(true);

    // The archive is a consistent copy: its chain verifies and is a prefix of the live chain.
    const archive = await verifyArchiveFile(backup.body.path, {
      vaultKey: decodeVaultKey(await readFile(join(A, 'data', 'vault.key'), 'utf8')),
      checksum: backup.body.checksum,
    });
    expect(archive.mac).toBe('valid');
    expect(archive.chain).toMatchObject({ valid: true });
    const atBackup = archive.chain!.entry_count;
    const liveA = await auditEntries(url, admin);
    expect(liveA[atBackup - 1]!.hash).toBe(archive.manifest.audit!.tip_hash);
    expect(archive.summary.collections.api_keys).toBeGreaterThanOrEqual(2);

    // After the backup: another memory value.
    await call(url, 'PUT', `/agents/${agent}/memory/policy`, { token: admin, body: { value: 'HO-2' } });
    expect(await stopGracefully(platform)).toBe(0);

    // A new data dir, the original vault key given to the restore (docs/backup.md "Into a new data dir").
    const B = join(dir, 'b');
    await writePlatformConfig(B);
    const restored = await backupCli(
      [
        'restore',
        '--data-dir',
        join(B, 'data'),
        '--vault-key-file',
        join(A, 'data', 'vault.key'),
        backup.body.path,
      ],
      { cwd: dir },
    );
    expect(restored.code, restored.stderr).toBe(0);
    const b = await start(B);

    expect((await call(b.url, 'GET', '/auth/whoami', { token: admin })).body).toMatchObject({
      identity: 'admin',
      role: 'admin',
    });
    // The keys were made one after the other: those of the archive are the ones made before one
    // instant (a prefix), and they authenticate; a key made after the backup answered does not.
    // (One refused key only: failed authentications are answered with backoff.)
    let prefix = 0;
    while (
      prefix < keys.length &&
      (await call(b.url, 'GET', '/auth/whoami', { token: keys[prefix]!.secret })).status === 200
    )
      prefix += 1;
    expect(prefix).toBe(archive.summary.collections.api_keys! - 1);
    const madeAfter = keys.find((k) => k.createdAfter)!;
    expect((await call(b.url, 'GET', '/auth/whoami', { token: madeAfter.secret })).status).toBe(401);

    expect((await call(b.url, 'GET', `/agents/${agent}`, { token: admin })).body.state).toBe('Running');
    expect(
      (await call(b.url, 'GET', `/agents/${agent}/memory`, { token: admin })).body.entries,
    ).toMatchObject([{ key: 'policy', value: 'HO-1' }]);
    const sent = await call(b.url, 'POST', `/agents/${agent}/send`, {
      token: admin,
      body: { message: 'still here?' },
    });
    expect(sent.body.content).toBe('still here?');

    const verify = (await call(b.url, 'GET', '/security/verify', { token: admin })).body;
    expect(verify.valid).toBe(true);
    const liveB = await auditEntries(b.url, admin);
    // The backup's entries, unchanged, then the restore's own entry.
    expect(liveB.slice(0, atBackup).map((e) => e.hash)).toEqual(liveA.slice(0, atBackup).map((e) => e.hash));
    expect(liveB[atBackup]).toMatchObject({
      action: 'backup.restore',
      target: backup.body.id,
      result: 'success',
    });

    // The integration reconnected at boot with its key from the vault: the sealed value opened.
    await waitUntil(async () => (await integrationStatus(b.url, admin)) === 'Running', {
      timeoutMs: 30_000,
      message: 'the integration to run',
    });

    // The same archive on a platform started with another vault key: the store's fleet agreement
    // (docs/scale-out.md) refuses the start, naming the vault key but never either key.
    const C = join(dir, 'c');
    await writePlatformConfig(C);
    await cp(join(B, 'data'), join(C, 'data'), { recursive: true });
    await stopGracefully(b.platform);
    await rm(join(C, 'data', 'vault.key'));
    const otherKey = randomBytes(32).toString('base64');
    const refused = await start(C, { AP_VAULT_KEY: otherKey }).catch((error: unknown) => error as Error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/vault key: this node's vault key \(hmac-sha256:[0-9a-f]{32}\) differs from the fleet's/);
    expect((refused as Error).message).not.toContain(otherKey);
    // Told to replace the fleet's vault key (AP_FLEET_ADOPT), it starts, and the key cannot be read there.
    const c = await start(C, { AP_VAULT_KEY: otherKey, AP_FLEET_ADOPT: 'vault_key' });
    const status = await call(c.url, 'GET', '/integrations/crm/status', { token: admin });
    await waitUntil(async () => (await integrationStatus(c.url, admin)) !== 'Installed', {
      timeoutMs: 20_000,
      message: 'the integration to be tried',
    });
    expect(await integrationStatus(c.url, admin)).not.toBe('Running');
    expect(JSON.stringify(status.body)).not.toContain('crm-secret');
  }, 300_000);
});
