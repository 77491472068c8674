import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { loadVaultKey } from './vault-key.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-vault-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const posixOnly = process.platform === 'win32' ? it.skip : it;

describe('vault key', () => {
  it('takes a base64 32-byte key from the environment variable and writes no file', async () => {
    const key = randomBytes(32);
    const loaded = await loadVaultKey({ dataDir: dir, env: { AP_VAULT_KEY: key.toString('base64') }, envName: 'AP_VAULT_KEY' });
    expect(loaded.equals(key)).toBe(true);
    await expect(stat(join(dir, 'vault.key'))).rejects.toThrow(/ENOENT/);
  });

  it.each([
    ['too short', randomBytes(16).toString('base64')],
    ['too long', randomBytes(33).toString('base64')],
    ['not base64', 'this is not base64 at all, is it?'],
  ])('refuses an environment key that is %s, naming the variable but not the value', async (_name, value) => {
    const error = await loadVaultKey({ dataDir: dir, env: { MY_KEY: value }, envName: 'MY_KEY' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('MY_KEY');
    expect((error as Error).message).not.toContain(value);
  });

  posixOnly('creates a 0600 key file on first use and returns the same key afterwards', async () => {
    const dataDir = join(dir, 'nested', 'data');
    const first = await loadVaultKey({ dataDir, env: {}, envName: 'AP_VAULT_KEY' });
    expect(first).toHaveLength(32);
    const path = join(dataDir, 'vault.key');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(path, 'utf8')).trim(), 'base64').equals(first)).toBe(true);
    const again = await loadVaultKey({ dataDir, env: { AP_VAULT_KEY: '' }, envName: 'AP_VAULT_KEY' });
    expect(again.equals(first)).toBe(true);
  });

  it('agrees on one key when two loads race on an empty data dir', async () => {
    const [a, b] = await Promise.all([1, 2].map(() => loadVaultKey({ dataDir: dir, env: {}, envName: 'K' })));
    expect(a?.equals(b!)).toBe(true);
  });

  posixOnly('refuses a key file readable by group or others', async () => {
    const path = join(dir, 'vault.key');
    await writeFile(path, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    await chmod(path, 0o644);
    await expect(loadVaultKey({ dataDir: dir, env: {}, envName: 'K' })).rejects.toThrow(/readable by group or others \(mode 0644\).*chmod 600/);
  });

  posixOnly('refuses a key file of the wrong length', async () => {
    await writeFile(join(dir, 'vault.key'), randomBytes(31).toString('base64'), { mode: 0o600 });
    await expect(loadVaultKey({ dataDir: dir, env: {}, envName: 'K' })).rejects.toThrow(/vault\.key: must hold the base64 encoding of exactly 32 bytes/);
  });
});
