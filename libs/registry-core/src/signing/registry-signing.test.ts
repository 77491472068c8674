import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSigner, loadOrCreateSigningKey, parseTrustedKey, sha256Tagged, verifyVersion, type SignedVersion } from './registry-signing.ts';

const VERSION: SignedVersion = { name: 'claims-intake', version: '1.2.0', archive_sha256: sha256Tagged(Buffer.from('archive')), content_hash: sha256Tagged(Buffer.from('payload')) };

describe('registry signatures', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-signing-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('makes the key at first start (0600) and reads the same key afterwards', async () => {
    const path = join(dir, 'registry', 'signing-key.pem');
    const first = await loadOrCreateSigningKey(path);
    const second = await loadOrCreateSigningKey(path);
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.signer.publicKey).toEqual(first.signer.publicKey);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(first.signer.publicKey.public_key).toMatch(/^ed25519:[A-Za-z0-9_-]{43}$/);
  });

  it('gives processes starting together one key: each reads a whole file, exactly one made it', async () => {
    for (let round = 0; round < 20; round++) {
      const path = join(dir, `round-${round}`, 'signing-key.pem');
      const loaded = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSigningKey(path)));
      expect(new Set(loaded.map((l) => l.signer.publicKey.key_id)).size).toBe(1);
      expect(loaded.filter((l) => l.created)).toHaveLength(1);
      expect(await readdir(join(dir, `round-${round}`))).toEqual(['signing-key.pem']);
    }
  });

  it('verifies a signature with the trusted key, in either published form, and refuses any change', () => {
    const signer = createSigner(generateKeyPairSync('ed25519').privateKey);
    const signature = signer.signVersion(VERSION);
    for (const form of [signer.publicKey.public_key, signer.publicKey.public_key_pem]) {
      const trusted = parseTrustedKey(form);
      expect(verifyVersion(VERSION, signature, [trusted])?.key_id).toBe(signer.publicKey.key_id);
    }
    const trusted = [parseTrustedKey(signer.publicKey.public_key)];
    expect(verifyVersion({ ...VERSION, version: '1.2.1' }, signature, trusted)).toBeNull();
    expect(verifyVersion({ ...VERSION, name: 'claims-intakes' }, signature, trusted)).toBeNull();
    expect(verifyVersion({ ...VERSION, archive_sha256: sha256Tagged(Buffer.from('other')) }, signature, trusted)).toBeNull();
    expect(verifyVersion(VERSION, 'not-a-signature', trusted)).toBeNull();
    const stranger = createSigner(generateKeyPairSync('ed25519').privateKey);
    expect(verifyVersion(VERSION, stranger.signVersion(VERSION), trusted)).toBeNull();
  });

  it('refuses trusted keys that are not Ed25519 public keys, saying what was expected', () => {
    expect(() => parseTrustedKey('ed25519:AAAA')).toThrow(/32 bytes/);
    expect(() => parseTrustedKey('rsa:abc')).toThrow(/expected "ed25519:<base64url>"/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expect(() => parseTrustedKey(rsa)).toThrow(/not Ed25519/);
  });

  it('refuses to sign a field holding a line break (the statement is line-based)', () => {
    const signer = createSigner(generateKeyPairSync('ed25519').privateKey);
    expect(() => signer.signVersion({ ...VERSION, version: '1.0.0\nx' })).toThrow(/line break/);
  });
});
