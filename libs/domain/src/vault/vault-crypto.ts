import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Errors } from '../errors/errors.ts';

/**
 * AES-256-GCM sealing for vault values. Format: `v1:<iv b64>:<tag b64>:<ciphertext b64>`.
 * - A fresh random 12-byte IV per seal: GCM loses confidentiality and integrity if an IV repeats
 *   under one key, and rotations re-seal under the same key.
 * - The key name is the additional authenticated data, so a ciphertext copied from one vault key
 *   to another fails to open instead of yielding the other key's secret.
 * - The version prefix lets a later format (or key rotation scheme) coexist with stored v1 values.
 */
export const VAULT_KEY_BYTES = 32;
const IV_BYTES = 12;
/** Pinned so that a truncated stored tag is refused rather than checked with fewer bits. */
const TAG_BYTES = 16;
const FORMAT = 'v1';

export function assertVaultKey(key: Buffer): void {
  if (key.length !== VAULT_KEY_BYTES) {
    throw Errors.config(`vault key must be ${VAULT_KEY_BYTES} bytes (AES-256), got ${key.length}`);
  }
}

export function sealValue(key: Buffer, name: string, plaintext: string): string {
  assertVaultKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(name, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [FORMAT, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ct.toString('base64')].join(
    ':',
  );
}

/**
 * Opens a sealed value. Throws an Internal PlatformError (never returns garbage) when the format
 * is unknown, the vault key is not the one that sealed it, the value belongs to another name, or
 * the stored bytes were altered; the message never contains the sealed or plaintext value.
 */
export function openValue(key: Buffer, name: string, sealed: string): string {
  assertVaultKey(key);
  const parts = sealed.split(':');
  if (parts.length !== 4 || parts[0] !== FORMAT) {
    throw Errors.internal(`vault entry '${name}' has an unknown format (expected ${FORMAT})`);
  }
  const [, ivB64, tagB64, ctB64] = parts as [string, string, string, string];
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivB64, 'base64'), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(name, 'utf8'));
    decipher.setAuthTag(Buffer.from(tagB64, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(ctB64, 'base64')), decipher.final()]).toString('utf8');
  } catch (cause) {
    throw Errors.internal(
      `vault entry '${name}' cannot be decrypted: wrong vault key, or the stored value was altered or moved from another key`,
      cause,
    );
  }
}
