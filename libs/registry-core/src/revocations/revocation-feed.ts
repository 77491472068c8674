import { RevocationFeedPayload, type Revocation } from '@agent-platform/contracts';
import { CompactSign, compactVerify, decodeProtectedHeader } from 'jose';
import { Value } from 'typebox/value';
import type { RegistrySigner, TrustedKey } from '../signing/registry-signing.ts';

/**
 * The signed revocation feed (docs/registry.md "Revocation feed"): a compact JWS, EdDSA with the
 * registry's signing key, `kid` = its key_id, payload `RevocationFeedPayload`. Served by
 * `GET /revocations?since=` and pushed on `registry.revocations`; a platform trusts it only when
 * a key of `[catalog] trusted_keys` verifies it.
 */
export async function signRevocationFeed(
  signer: RegistrySigner,
  feed: { since: number; latest_seq: number; revocations: Revocation[] },
  now: Date,
): Promise<string> {
  const payload: RevocationFeedPayload = { iss: signer.publicKey.key_id, iat: Math.floor(now.getTime() / 1000), ...feed };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'EdDSA', kid: signer.publicKey.key_id, typ: 'agent-platform-revocations+jws' })
    .sign(signer.privateKey);
}

export class RevocationFeedError extends Error {}

/**
 * The payload of `jws` when a trusted key signed it, with the key that did. Throws
 * `RevocationFeedError` (never trusting a thing) for a malformed JWS, another algorithm, a key
 * nobody configured, a bad signature or a payload of the wrong shape.
 */
export async function verifyRevocationFeed(jws: string, trusted: readonly TrustedKey[]): Promise<{ payload: RevocationFeedPayload; key: TrustedKey }> {
  let header;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw new RevocationFeedError('the revocation feed is not a compact JWS');
  }
  if (header.alg !== 'EdDSA' && header.alg !== 'Ed25519') throw new RevocationFeedError(`the revocation feed is signed with ${String(header.alg)}, not EdDSA`);
  const candidates = trusted.filter((t) => header.kid === undefined || t.key_id === header.kid);
  for (const key of candidates) {
    let bytes: Uint8Array;
    try {
      bytes = (await compactVerify(jws, key.key, { algorithms: ['EdDSA', 'Ed25519'] })).payload;
    } catch {
      continue;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw new RevocationFeedError('the revocation feed payload is not JSON');
    }
    if (!Value.Check(RevocationFeedPayload, payload)) throw new RevocationFeedError('the revocation feed payload does not have the expected shape');
    return { payload, key };
  }
  throw new RevocationFeedError(
    candidates.length === 0 ? `the revocation feed is signed by key ${String(header.kid)}, which is not in [catalog] trusted_keys` : 'the revocation feed signature does not verify',
  );
}
