import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileOnce } from '@agent-platform/store';
import { ConfigError } from './config-error.ts';

export const VAULT_KEY_BYTES = 32;
export const VAULT_KEY_FILE = 'vault.key';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The vault's 32-byte key: from the environment variable `envName` (base64) when set, else from
 * `<dataDir>/vault.key`, created on first use with mode 0600. A key file that group or others may
 * read is refused rather than used: that key decrypts every stored credential. Error messages
 * name the variable or file and never include the key.
 */
export async function loadVaultKey(options: { dataDir: string; env: Record<string, string | undefined>; envName: string }): Promise<Buffer> {
  const { dataDir, env, envName } = options;
  const fromEnv = env[envName];
  if (fromEnv !== undefined && fromEnv !== '') {
    const key = decodeVaultKey(fromEnv);
    if (key === null) throw new ConfigError([`${envName}: must be the base64 encoding of exactly ${VAULT_KEY_BYTES} bytes`]);
    return key;
  }
  const path = join(dataDir, VAULT_KEY_FILE);
  await createKeyFileIfMissing(dataDir, path);
  await refuseLooseMode(path);
  const key = decodeVaultKey(await readFile(path, 'utf8'));
  if (key === null) throw new ConfigError([`${path}: must hold the base64 encoding of exactly ${VAULT_KEY_BYTES} bytes`]);
  return key;
}

/** The key in a vault key file's or variable's text (base64 of 32 bytes); null when it is not one. */
export function decodeVaultKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (!BASE64.test(trimmed)) return null;
  const key = Buffer.from(trimmed, 'base64');
  return key.length === VAULT_KEY_BYTES ? key : null;
}

/** Creates the key file unless it exists (two processes starting together agree on one key). */
async function createKeyFileIfMissing(dataDir: string, path: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (await exists(path)) return;
  await createFileOnce(path, `${randomBytes(VAULT_KEY_BYTES).toString('base64')}\n`, 0o600);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function refuseLooseMode(path: string): Promise<void> {
  // Windows has no POSIX mode bits; the ACLs of the data directory protect the file there.
  if (process.platform === 'win32') return;
  const mode = (await stat(path)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new ConfigError([
      `${path}: readable by group or others (mode ${mode.toString(8).padStart(4, '0')}); run: chmod 600 ${path}`,
    ]);
  }
}
