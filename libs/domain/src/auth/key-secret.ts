import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every local API key secret starts with this (spec §Authentication, mode `local`). */
export const KEY_SECRET_PREFIX = 'svc_sk_';

/** Characters of the secret kept in clear on the record, to tell keys apart in lists and logs. */
const PREFIX_LENGTH = 12;

/** A fresh secret: the prefix (`svc_sk_` unless another kind of key says) plus 32 random bytes (256 bits) in base64url. */
export function generateSecret(prefix: string = KEY_SECRET_PREFIX): string {
  return prefix + randomBytes(32).toString('base64url');
}

/**
 * The stored form of a secret. A single SHA-256 rather than a slow password hash (scrypt,
 * argon2) on purpose: the secret carries 256 random bits, so there is no dictionary to
 * precompute and brute force is out of reach whatever the hash speed. A fast hash also lets the
 * record be found by an indexed equality lookup on every request, which a salted slow hash
 * could not do without scanning every key.
 */
export function hashSecret(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex')}`;
}

/** The identification prefix shown in lists (`svc_sk_` or `reg_sk_` + 5 random characters). */
export function secretPrefix(secret: string): string {
  return secret.slice(0, PREFIX_LENGTH);
}

/** Compares two stored hashes in constant time, so timing tells nothing about how much matched. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
