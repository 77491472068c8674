import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcProvider, tokenForger, type OidcProviderHarness } from './testing/index.ts';
import { createTokenValidator } from './token-validator.ts';
import { TokenRejectedError } from './token-rejected.ts';

// `verifyIdentity`: every check of `validate` but the role, for CI tokens matched on their claims
// (the registry's trusted publishing). A token without any role passes it and fails `validate`.
const AUDIENCE = 'https://registry.test.example';
let provider: OidcProviderHarness;

beforeAll(async () => {
  provider = await startOidcProvider({ audience: AUDIENCE, clients: {} });
});
afterAll(async () => provider?.close());

const validator = () =>
  createTokenValidator(
    { issuer: provider.issuer, audience: AUDIENCE, jwks_uri: '', role_claim: 'realm_access.roles', allowed_algorithms: ['RS256'], role_mapping: { publishers: 'publisher' }, jwks_cache_ttl_secs: 300 },
    { roles: ['publisher'] as const },
  );

describe('verifyIdentity', () => {
  it('accepts a valid token without a role, with its claims, and refuses what validate refuses but the role', async () => {
    const forger = tokenForger(provider, { audience: AUDIENCE, roles: [] });
    const ci = await forger.forge({ sub: 'repo:acme/x:ref:refs/heads/main', repository: 'acme/x', realm_access: undefined }, { typ: 'JWT' });
    const checked = validator();
    await expect(checked.verifyIdentity(ci)).resolves.toMatchObject({ identity: 'repo:acme/x:ref:refs/heads/main', issuer: provider.issuer, claims: { repository: 'acme/x' } });
    await expect(checked.validate(ci)).rejects.toMatchObject({ reason: 'no_role' });
    for (const [token, reason] of [
      [await forger.forge({ exp: forger.now() - 300 }), 'expired'],
      [await forger.forge({ aud: 'https://elsewhere.example' }), 'wrong_audience'],
      [await forger.forge({ sub: undefined }), 'missing_claim'],
      [forger.unsigned(), 'algorithm_not_allowed'],
    ] as const) {
      const refused = await checked.verifyIdentity(token).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TokenRejectedError);
      expect((refused as TokenRejectedError).reason).toBe(reason);
    }
  });
});
