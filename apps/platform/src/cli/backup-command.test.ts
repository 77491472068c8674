import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '@agent-platform/api/testing';
import { runCliHere, runCliProcess } from './testing/cli-runs.ts';

const cli = (cwd: string, ...args: string[]) => runCliHere(['backup', ...args], { cwd });

let dir: string;
const apis: TestApi[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-backup-cli-'));
});
afterEach(async () => {
  for (const api of apis.splice(0)) await api.close();
  await rm(dir, { recursive: true, force: true });
});

async function platformIn(root: string): Promise<TestApi> {
  const api = await startTestApi({ dataDir: root, config: { auth: { mode: 'local' } } });
  apis.push(api);
  return api;
}

describe('agent-platform backup', () => {
  it('creates and verifies an archive of a running platform, refuses to restore under it, and restores into a new data dir', async () => {
    const api = await platformIn(join(dir, 'old'));
    const dataDir = join(api.dataDir, 'data');
    const admin = await api.issueKey('admin', 'root');
    await api.request('PUT', '/vault/crm-key', { token: admin, body: { value: 'sealed-secret' } });
    await api.request('POST', '/audit/append', { token: admin, body: { event_type: 'before-backup' } });

    const created = await cli(dir, 'create', '--data-dir', dataDir);
    expect(created).toMatchObject({ code: 0 });
    const [id, scope, , , , checksum, path] = created.stdout.trim().split(/\s+/);
    expect(scope).toBe('full');
    expect((await cli(dir, 'list', '--data-dir', dataDir)).stdout).toContain(id);

    const verified = await cli(
      dir,
      'verify',
      '--vault-key-file',
      join(dataDir, 'vault.key'),
      '--checksum',
      checksum!,
      path!,
    );
    expect(verified).toMatchObject({ code: 0 });
    expect(verified.stdout).toMatch(/audit: +\d+ entries, the chain verifies/);
    expect(verified.stdout).toContain(`made with the vault key of ${join(dataDir, 'vault.key')}`);
    await writeFile(join(dir, 'other.key'), randomBytes(32).toString('base64'));
    expect((await cli(dir, 'verify', '--vault-key-file', 'other.key', path!)).stdout).toContain(
      'made with another vault key',
    );

    const underLoad = await cli(dir, 'restore', '--data-dir', dataDir, path!);
    expect(underLoad).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('is open in another process'),
    });

    // A new data dir: without the original vault key the archive is refused, with it restored.
    const target = join(dir, 'new', 'data');
    const keyless = await cli(dir, 'restore', '--data-dir', target, path!);
    expect(keyless).toMatchObject({ code: 1, stderr: expect.stringContaining('no vault key') });
    await writeFile(join(dir, 'stranger.key'), randomBytes(32).toString('base64'));
    const wrongKey = await cli(
      dir,
      'restore',
      '--data-dir',
      target,
      '--vault-key-file',
      'stranger.key',
      path!,
    );
    expect(wrongKey).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('made with another vault key'),
    });
    expect(await stat(join(target, 'vault.key')).catch(() => null)).toBeNull();

    await runCliProcess(
      ['backup', 'restore', '--data-dir', target, '--vault-key-file', join(dataDir, 'vault.key'), path!],
      { cwd: dir },
    ).then((res) =>
      expect(res).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(`wrote ${join(target, 'vault.key')}`),
      }),
    );
    expect(((await stat(join(target, 'vault.key'))).mode & 0o777).toString(8)).toBe('600');
    expect(await readFile(join(target, 'vault.key'), 'utf8')).toBe(
      await readFile(join(dataDir, 'vault.key'), 'utf8'),
    );

    const restored = await platformIn(join(dir, 'new'));
    expect((await restored.request('GET', '/auth/whoami', { token: admin })).body).toMatchObject({
      identity: 'root',
      role: 'admin',
    });
    expect(await restored.deps.vault.resolve('crm-key')).toBe('sealed-secret');
    const verify = (await restored.request('GET', '/security/verify', { token: admin })).body;
    expect(verify.valid).toBe(true);
    const last = (await restored.request('GET', '/security/audit?category=system&limit=1', { token: admin }))
      .body.entries[0];
    expect(last).toMatchObject({ action: 'backup.restore', identity: 'cli', result: 'success' });
  });

  it('refuses a damaged archive and a wrong command line', async () => {
    const api = await platformIn(join(dir, 'p'));
    const dataDir = join(api.dataDir, 'data');
    const created = await cli(dir, 'create', '--data-dir', dataDir, '--scope', 'agents_only');
    const path = created.stdout.trim().split(/\s+/)[6]!;
    const bytes = await readFile(path);
    await writeFile(join(dir, 'cut.tar.gz'), bytes.subarray(0, bytes.length - 30));
    const cut = await cli(dir, 'verify', 'cut.tar.gz');
    expect(cut).toMatchObject({
      code: 1,
      stdout: expect.stringMatching(/^INVALID: the backup archive is damaged/),
    });
    expect((await cli(dir, 'create', '--data-dir', dataDir, '--scope', 'most')).code).toBe(2);
    expect((await cli(dir, 'restore', '--data-dir', dataDir)).code).toBe(2);
    expect((await cli(dir, 'frobnicate')).code).toBe(2);
  });
});
