import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { importJWK, SignJWT, type JWTPayload } from 'jose';
import type { OidcProviderHarness } from './oidc-provider-harness.ts';

const nowSecs = (): number => Math.floor(Date.now() / 1000);

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * Tokens a test builds itself to show one refusal each. `forge` signs with the provider's real
 * key, so that a forged token is valid (an access token of `forged-client`, roles `roles`) unless
 * its overrides break it: an undefined value removes a claim or header parameter.
 */
export function tokenForger(provider: OidcProviderHarness, defaults: { audience: string; roles: string[] }) {
  const claims = (payload: JWTPayload): JWTPayload => ({
    iss: provider.issuer,
    aud: defaults.audience,
    sub: 'forged-client',
    iat: nowSecs(),
    exp: nowSecs() + 300,
    realm_access: { roles: defaults.roles },
    ...payload,
  });
  return {
    now: nowSecs,
    async forge(payload: JWTPayload = {}, header: Record<string, unknown> = {}): Promise<string> {
      const key = await importJWK(provider.signingKey, 'RS256');
      return new SignJWT(claims(payload)).setProtectedHeader({ alg: 'RS256', kid: provider.signingKey.kid, typ: 'at+jwt', ...header }).sign(key);
    },
    /** `alg: none`, no signature. */
    unsigned(payload: JWTPayload = {}): string {
      return `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims(payload))}.`;
    },
    /** HS256 tokens whose HMAC secret is the provider's public key, in each form a confused verifier might use (PEM, JWK text, modulus). */
    async hmacWithPublicKey(payload: JWTPayload = {}): Promise<string[]> {
      const pem = createPublicKey({ key: provider.publicKey as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
      return Promise.all(
        [pem, JSON.stringify(provider.publicKey), provider.publicKey.n ?? ''].map((secret) =>
          new SignJWT(claims(payload)).setProtectedHeader({ alg: 'HS256', kid: provider.signingKey.kid }).sign(new TextEncoder().encode(secret)),
        ),
      );
    },
  };
}
