import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyArchiveFile } from '@agent-platform/backup';
import { forgeArchive } from '@agent-platform/backup/testing';
import { decodeVaultKey } from '@agent-platform/config';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCli } from '../support/backup-support.ts';
import { startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Backups of a fleet on the embedded store (docs/backup.md "Restoring a fleet"): an api node takes
// a consistent backup while a worker serves invocations; a restore over HTTP is refused (other
// processes share the store) and done offline with every process stopped; an api node killed
// mid-backup leaves no half archive listed.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const AGENT_PACKAGE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));

describe.skipIf(natsBinary === null || redisBinary === null)(
  'a fleet: backups through an api node, restore offline',
  () => {
    let fleet: Fleet;
    let api: string;
    let token: string;
    let agent: string;
    let worker: AppProcess;
    let apiNode: AppProcess;
    let backup: { id: string; path: string; checksum: string };
    const dataDir = () => join(fleet.dir, 'data');
    const memory = async () =>
      (await call(api, 'GET', `/agents/${agent}/memory`, { token })).body.entries as Array<{
        key: string;
        value: string;
      }>;

    beforeAll(async () => {
      fleet = await startFleet({ apis: 1, workers: 1, schedulers: 0 });
      api = fleet.urls[0]!;
      apiNode = fleet.apis[0]!;
      worker = fleet.workers[0]!;
      token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
      const installed = await call(api, 'POST', '/catalog/install', {
        token,
        body: { path: AGENT_PACKAGE, activate: true },
      });
      expect(installed.status).toBe(201);
      agent = installed.body.installed.at(-1).id;
      await call(api, 'PUT', `/agents/${agent}/memory/policy`, { token, body: { value: 'F-1' } });
    }, 180_000);

    afterAll(async () => {
      await fleet?.close();
    });

    it('an api node backs up while the worker serves invocations; the archive is consistent', async () => {
      let sending = true;
      const statuses: number[] = [];
      const sender = async () => {
        for (let i = 0; sending && i < 200; i++)
          statuses.push(
            (await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: `fleet ${i}` } }))
              .status,
          );
      };
      const load = Promise.all([sender(), sender()]);
      await waitUntil(() => statuses.length >= 4, { timeoutMs: 30_000, message: 'invocations to flow' });
      const made = await call(api, 'POST', '/backup/create', { token, body: { scope: 'full' } });
      sending = false;
      await load;
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      expect(statuses.every((s) => s === 200)).toBe(true);
      backup = made.body;
      const vaultKey = decodeVaultKey(await readFile(join(dataDir(), 'vault.key'), 'utf8'));
      const report = await verifyArchiveFile(backup.path, { vaultKey, checksum: backup.checksum });
      expect(report).toMatchObject({ mac: 'valid', chain: { valid: true } });
      expect(
        (await call(api, 'GET', '/backup/list', { token })).body.backups.map((b: { id: string }) => b.id),
      ).toEqual([backup.id]);
    });

    it('refuses a restore over HTTP, naming the offline procedure, and changes nothing', async () => {
      const later: string = (
        await call(api, 'POST', '/auth/keys', { token, body: { name: 'later', role: 'viewer' } })
      ).body.secret;
      await call(api, 'PUT', `/agents/${agent}/memory/policy`, { token, body: { value: 'F-2' } });
      const refused = await call(api, 'POST', '/backup/restore', { token, body: { id: backup.id } });
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toContain('agent-platform backup restore --data-dir');
      expect((await call(api, 'GET', '/auth/whoami', { token: later })).status).toBe(200);
      expect(await memory()).toMatchObject([{ key: 'policy', value: 'F-2' }]);
    });

    it('an api node killed mid-backup leaves no half archive listed', async () => {
      void call(api, 'POST', '/backup/create', { token, body: { scope: 'full' } }).catch(() => undefined);
      const partial = async () =>
        (await readdir(join(dataDir(), 'backups'))).some((n) => n.endsWith('.partial'));
      await waitUntil(partial, { timeoutMs: 20_000, intervalMs: 1, message: 'a backup in progress' });
      await apiNode.kill();
      apiNode = await fleet.add('api');
      const listed = (await call(api, 'GET', '/backup/list', { token })).body.backups as Array<{
        id: string;
        path: string;
      }>;
      for (const archive of listed)
        expect((await verifyArchiveFile(archive.path, { vaultKey: null, checksum: null })).chain?.valid).toBe(
          true,
        );
      expect(listed.map((b) => b.id)).toContain(backup.id);
    });

    it('restores offline: refused while processes hold the store, done with every process stopped', async () => {
      const later: string = (
        await call(api, 'POST', '/auth/keys', { token, body: { name: 'later-2', role: 'viewer' } })
      ).body.secret;
      const running = await backupCli(['restore', '--data-dir', dataDir(), backup.path], { cwd: fleet.dir });
      expect(running.code).toBe(1);
      expect(running.stderr).toContain('is open in another process');

      expect(await apiNode.stop()).toBe(0);
      expect(await worker.stop()).toBe(0);
      // An agents_only archive repacked as another platform's (foreign vault key, garbage MAC, no
      // signature): refused offline too, even with --allow-foreign (docs/backup.md "Foreign archives").
      const agentsOnly = await backupCli(['create', '--data-dir', dataDir(), '--scope', 'agents_only'], {
        cwd: fleet.dir,
      });
      expect(agentsOnly.code, agentsOnly.stderr).toBe(0);
      const forged = await forgeArchive(
        agentsOnly.stdout.trim().split(/\s+/).at(-1)!,
        join(fleet.dir, 'forged.tar.gz'),
        {
          manifest: (m) => ({ ...m, vault_key_id: `sha256:${'ab'.repeat(16)}` }),
          mac: `hmac-sha256:${'0'.repeat(64)}\n`,
          signature: null,
        },
      );
      const refused = await backupCli(['restore', '--allow-foreign', '--data-dir', dataDir(), forged], {
        cwd: fleet.dir,
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/refused, nothing was changed: .*trusted_keys/);
      const restored = await backupCli(['restore', '--data-dir', dataDir(), backup.path], { cwd: fleet.dir });
      expect(restored.code, restored.stderr).toBe(0);
      apiNode = await fleet.add('api');
      worker = await fleet.add('agent-worker');

      expect((await call(api, 'GET', '/auth/whoami', { token: later })).status).toBe(401);
      expect(await memory()).toMatchObject([{ key: 'policy', value: 'F-1' }]);
      const sent = await call(api, 'POST', `/agents/${agent}/send`, {
        token,
        body: { message: 'after the restore' },
      });
      expect(sent.body.content).toBe('after the restore');
      expect((await call(api, 'GET', '/security/verify', { token })).body.valid).toBe(true);
    }, 180_000);
  },
);
