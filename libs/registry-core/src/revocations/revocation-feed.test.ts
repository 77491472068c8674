import { generateKeyPairSync } from 'node:crypto';
import { CompactSign } from 'jose';
import { describe, expect, it } from 'vitest';
import { createSigner, parseTrustedKey } from '../signing/registry-signing.ts';
import { signRevocationFeed, verifyRevocationFeed } from './revocation-feed.ts';

const signer = createSigner(generateKeyPairSync('ed25519').privateKey);
const trusted = [parseTrustedKey(signer.publicKey.public_key)];
const FEED = { since: 0, latest_seq: 1, revocations: [{ seq: 1, name: 'claims-intake', version: '1.0.0', reason: 'exfiltrates claims', revoked_at: '2026-11-25T10:00:00.000Z' }] };

describe('the revocation feed', () => {
  it('verifies with the trusted key and returns the payload as signed', async () => {
    const jws = await signRevocationFeed(signer, FEED, new Date('2026-11-25T10:00:05Z'));
    const { payload, key } = await verifyRevocationFeed(jws, trusted);
    expect(key.key_id).toBe(signer.publicKey.key_id);
    expect(payload).toEqual({ iss: signer.publicKey.key_id, iat: 1795600805, ...FEED });
  });

  it('refuses a feed from an untrusted key, a changed payload, another algorithm and garbage', async () => {
    const stranger = createSigner(generateKeyPairSync('ed25519').privateKey);
    await expect(verifyRevocationFeed(await signRevocationFeed(stranger, FEED, new Date()), trusted)).rejects.toThrow(/not in \[catalog\] trusted_keys/);
    const jws = await signRevocationFeed(signer, FEED, new Date());
    const [h, , s] = jws.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...FEED, revocations: [] })).toString('base64url')}.${s}`;
    await expect(verifyRevocationFeed(forged, trusted)).rejects.toThrow(/does not verify/);
    const hs = await new CompactSign(new TextEncoder().encode('{}')).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('k'.repeat(32)));
    await expect(verifyRevocationFeed(hs, trusted)).rejects.toThrow(/not EdDSA/);
    await expect(verifyRevocationFeed('garbage', trusted)).rejects.toThrow(/not a compact JWS/);
  });

  it('refuses a correctly signed payload of the wrong shape', async () => {
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify({ revocations: 'all' })))
      .setProtectedHeader({ alg: 'EdDSA', kid: signer.publicKey.key_id })
      .sign(signer.privateKey);
    await expect(verifyRevocationFeed(jws, trusted)).rejects.toThrow(/expected shape/);
  });
});
