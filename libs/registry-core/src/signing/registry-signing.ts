import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RegistrySigningKey } from '@agent-platform/contracts';
import { createFileOnce } from '@agent-platform/store';

/**
 * Registry signatures (docs/registry.md "Signatures"): every accepted version is signed with the
 * registry's Ed25519 key over one statement naming the package, the version, the archive bytes and
 * the payload hash, so that a platform holding the public key (`[catalog] trusted_keys`) knows the
 * archive it downloaded is the one this registry accepted under that name and version.
 */

/** What a signature covers, in this order, one per line. */
export interface SignedVersion {
  name: string;
  version: string;
  /** `sha256:<hex>` of the archive bytes. */
  archive_sha256: string;
  /** `[signing] content_hash` of the manifest: `sha256:<hex>` of the payload file. */
  content_hash: string;
}

const STATEMENT_TAG = 'agent-platform-registry-signature-v1';
const ED25519_PREFIX = 'ed25519:';
/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The exact bytes signed: the tag and the four fields, each on its own line, ending in a newline. */
export function signedStatement(v: SignedVersion): Buffer {
  for (const field of [v.name, v.version, v.archive_sha256, v.content_hash])
    if (/[\r\n]/.test(field)) throw new Error('a signed field cannot hold a line break');
  return Buffer.from(`${STATEMENT_TAG}\n${v.name}\n${v.version}\n${v.archive_sha256}\n${v.content_hash}\n`, 'utf8');
}

export function sha256Tagged(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A registry's private signing key and what it publishes about it. */
export interface RegistrySigner {
  readonly publicKey: RegistrySigningKey;
  /** base64url Ed25519 signature of `signedStatement(v)`. */
  signVersion(v: SignedVersion): string;
  /** Ed25519 signature of arbitrary bytes (the revocation feed's JWS uses the KeyObject instead). */
  readonly privateKey: KeyObject;
}

export function createSigner(privateKey: KeyObject): RegistrySigner {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the registry signing key must be Ed25519, not ${privateKey.asymmetricKeyType ?? 'unknown'}`);
  const publicKey = describePublicKey(createPublicKey(privateKey));
  return {
    publicKey,
    privateKey,
    signVersion: (v) => sign(null, signedStatement(v), privateKey).toString('base64url'),
  };
}

/** GET /signing-key's body for a public key. */
export function describePublicKey(key: KeyObject): RegistrySigningKey {
  const spki = key.export({ format: 'der', type: 'spki' });
  const raw = spki.subarray(SPKI_PREFIX.length);
  return {
    algorithm: 'Ed25519',
    key_id: keyIdOf(raw),
    public_key: `${ED25519_PREFIX}${raw.toString('base64url')}`,
    public_key_pem: key.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

function keyIdOf(raw: Uint8Array): string {
  return `sha256:${createHash('sha256').update(raw).digest('hex').slice(0, 32)}`;
}

/** A trusted key as configured: `ed25519:<base64url>` (or a PEM), with its key id. */
export interface TrustedKey {
  key_id: string;
  key: KeyObject;
}

/** Parses one `[catalog] trusted_keys` entry; throws with a message naming what is wrong. */
export function parseTrustedKey(text: string): TrustedKey {
  const trimmed = text.trim();
  let key: KeyObject;
  if (trimmed.startsWith(ED25519_PREFIX)) {
    const raw = Buffer.from(trimmed.slice(ED25519_PREFIX.length), 'base64url');
    if (raw.length !== 32) throw new Error(`trusted key ${abbreviate(trimmed)}: an Ed25519 public key is 32 bytes, this one is ${raw.length}`);
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } else if (trimmed.startsWith('-----BEGIN PUBLIC KEY-----')) {
    key = createPublicKey(trimmed);
  } else {
    throw new Error(`trusted key ${abbreviate(trimmed)}: expected "ed25519:<base64url>" as GET /signing-key shows it, or a PEM public key`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`trusted key ${abbreviate(trimmed)} is ${key.asymmetricKeyType ?? 'unknown'}, not Ed25519`);
  return { key_id: describePublicKey(key).key_id, key };
}

/**
 * The trusted key that made `signature` over `v`, or null when none did (a bad signature, or a
 * registry key nobody configured). Never throws on malformed input.
 */
export function verifyVersion(v: SignedVersion, signature: string, trusted: readonly TrustedKey[]): TrustedKey | null {
  let statement: Buffer;
  let sig: Buffer;
  try {
    statement = signedStatement(v);
    sig = Buffer.from(signature, 'base64url');
  } catch {
    return null;
  }
  if (sig.length !== 64) return null;
  return trusted.find((t) => verify(null, statement, t.key, sig)) ?? null;
}

/**
 * The registry's signing key from `path` (PEM PKCS#8), made there (mode 0600) when the file does
 * not exist yet: a registry signs from its first start.
 */
export async function loadOrCreateSigningKey(path: string): Promise<{ signer: RegistrySigner; created: boolean }> {
  const pem = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (pem !== null) return { signer: createSigner(createPrivateKey(pem)), created: false };
  const { privateKey } = generateKeyPairSync('ed25519');
  await mkdir(dirname(path), { recursive: true });
  // Another process starting at the same time may make it first: then its key is used.
  const created = await createFileOnce(path, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, 0o600);
  return { signer: createSigner(created ? privateKey : createPrivateKey(await readFile(path, 'utf8'))), created };
}

function abbreviate(text: string): string {
  return text.length > 24 ? `${text.slice(0, 24)}...` : text;
}
