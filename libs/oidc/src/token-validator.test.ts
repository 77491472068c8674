import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, SignJWT } from 'jose';
import { startAttackerKeyServer, startOidcProvider, tokenForger, type AttackerKeyServer, type OidcProviderHarness } from './testing/index.ts';
import { createTokenValidator, type TokenValidatorOptions, type TokenValidatorSettings } from './token-validator.ts';
import { TokenRejectedError, type TokenRejection } from './token-rejected.ts';

// A real OpenID provider on loopback issues the good tokens; the bad ones are forged with jose,
// most of them signed with the provider's own key (which the harness lets the test hold), so that
// each is refused for the one reason it is built to show.
const AUDIENCE = 'https://registry.test.example';
const ROLES = ['registry-admin', 'publisher', 'reader'] as const;
type Role = (typeof ROLES)[number];

let provider: OidcProviderHarness;
// The attacker's own key, served from a JWKS URL the forged tokens point at (jku/x5u).
let attacker: AttackerKeyServer;
let forger: ReturnType<typeof tokenForger>;

beforeAll(async () => {
  provider = await startOidcProvider({
    audience: AUDIENCE,
    clients: { 'ci-publisher': { roles: ['publishers', 'staff'] }, 'ops-admin': { roles: ['staff', 'registry-admins'] }, 'guest-bot': { roles: ['guests'] } },
  });
  attacker = await startAttackerKeyServer();
  forger = tokenForger(provider, { audience: AUDIENCE, roles: ['publishers'] });
});

afterAll(async () => {
  await provider?.close();
  await attacker?.close();
});

function settings(overrides: Partial<TokenValidatorSettings<Role>> = {}): TokenValidatorSettings<Role> {
  return {
    issuer: provider.issuer,
    audience: AUDIENCE,
    jwks_uri: '',
    role_claim: 'realm_access.roles',
    allowed_algorithms: ['RS256', 'ES256'],
    role_mapping: { publishers: 'publisher', 'registry-admins': 'registry-admin', staff: 'reader' },
    jwks_cache_ttl_secs: 300,
    ...overrides,
  };
}

function validator(overrides: Partial<TokenValidatorSettings<Role>> = {}, options: Partial<TokenValidatorOptions<Role>> = {}) {
  return createTokenValidator(settings(overrides), { roles: ROLES, ...options });
}

const now = () => Math.floor(Date.now() / 1000);

/** A token signed with the provider's real key: valid unless the overrides break it. */
const forge = (...args: Parameters<typeof forger.forge>) => forger.forge(...args);

async function refusal(promise: Promise<unknown>): Promise<{ reason: TokenRejection; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TokenRejectedError) return { reason: error.reason, message: error.message };
    throw error;
  }
  throw new Error('the token was accepted');
}

describe('tokens of a real OpenID provider', () => {
  it('accepts its access tokens, discovering the JWKS from the issuer, and maps the role', async () => {
    const token = await provider.accessToken('ci-publisher');
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { typ: string };
    expect(header.typ).toBe('at+jwt');
    const result = await validator().validate(token);
    expect(result).toMatchObject({ identity: 'ci-publisher', role: 'publisher', issuer: provider.issuer });
    expect(result.claims.aud).toBe(AUDIENCE);
    expect(provider.hits('/.well-known/openid-configuration')).toBeGreaterThan(0);
  });

  it('takes the most privileged of several mapped roles, and an explicit jwks_uri', async () => {
    const result = await validator({ jwks_uri: provider.jwksUri }).validate(await provider.accessToken('ops-admin'));
    expect(result.role).toBe('registry-admin');
  });

  it('refuses a valid token none of whose roles is mapped (no_role, said plainly)', async () => {
    const { reason, message } = await refusal(validator().validate(await provider.accessToken('guest-bot')));
    expect(reason).toBe('no_role');
    expect(message).toContain("carries no role this service maps (claim 'realm_access.roles'");
    expect(message).toContain("claim 'realm_access.roles' holds 'guests'");
  });

  it('refuses discovery that names another issuer (a trailing slash is another issuer)', async () => {
    const v = validator({ issuer: `${provider.issuer}/` });
    const { reason } = await refusal(v.validate(await forge({ iss: `${provider.issuer}/` })));
    expect(reason).toBe('keys_unavailable');
  });

  it('caches the JWKS: many tokens, one fetch', async () => {
    const v = validator({ jwks_uri: provider.jwksUri });
    const before = provider.hits('/jwks');
    const token = await provider.accessToken('ci-publisher');
    for (let i = 0; i < 10; i++) await v.validate(token);
    expect(provider.hits('/jwks') - before).toBe(1);
  });
});

describe('forged and misused tokens are refused', () => {
  it("refuses alg 'none'", async () => {
    expect((await refusal(validator().validate(forger.unsigned({ sub: 'x' })))).reason).toBe('algorithm_not_allowed');
  });

  it("refuses an HS256 token whose HMAC secret is the provider's public key (algorithm confusion)", async () => {
    for (const token of await forger.hmacWithPublicKey({ sub: 'x', realm_access: { roles: ['registry-admins'] } })) {
      expect((await refusal(validator().validate(token))).reason).toBe('algorithm_not_allowed');
    }
    // Nor can an operator allow it.
    expect(() => validator({ allowed_algorithms: ['RS256', 'HS256'] })).toThrow(/HMAC/);
  });

  it('refuses an algorithm the issuer does not allow, even when correctly signed', async () => {
    expect((await refusal(validator({ allowed_algorithms: ['ES256'] }).validate(await provider.accessToken('ci-publisher')))).reason).toBe('algorithm_not_allowed');
  });

  it('refuses a wrong issuer, a wrong audience, an expired token and one not valid yet', async () => {
    const v = validator();
    expect((await refusal(v.validate(await forge({ iss: `${provider.issuer}/other` })))).reason).toBe('wrong_issuer');
    expect((await refusal(v.validate(await forge({ iss: `${provider.issuer}/` })))).reason).toBe('wrong_issuer');
    expect((await refusal(v.validate(await forge({ aud: 'https://other-api.example' })))).reason).toBe('wrong_audience');
    expect((await refusal(v.validate(await forge({ exp: now() - 120 })))).reason).toBe('expired');
    expect((await refusal(v.validate(await forge({ nbf: now() + 120 })))).reason).toBe('not_yet_valid');
    expect((await refusal(v.validate(await forge({ exp: undefined })))).reason).toBe('missing_claim');
    // Within the clock tolerance (30 s by default) both are still fine, and the forged token is otherwise valid.
    expect((await v.validate(await forge({ exp: now() - 10, nbf: now() + 10 }))).identity).toBe('forged-client');
  });

  it('refuses an ID token used as an access token', async () => {
    const idClaims = { nonce: 'n-0S6_WzA2Mj', at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q', auth_time: now() - 5, azp: 'web-app' };
    const v = validator();
    // Even with the API's audience (the worst case: aud alone cannot tell them apart).
    const { reason, message } = await refusal(v.validate(await forge(idClaims, { typ: 'JWT' })));
    expect(reason).toBe('not_an_access_token');
    expect(message).toContain("ID token claim 'nonce'");
    expect((await refusal(v.validate(await forge({}, { typ: 'id+jwt' })))).reason).toBe('not_an_access_token');
    expect((await refusal(v.validate(await forge({ typ: 'ID' }, { typ: undefined })))).reason).toBe('not_an_access_token');
    // Its usual audience is the client id: refused for that first.
    expect((await refusal(v.validate(await forge({ ...idClaims, aud: 'web-app' }, { typ: 'JWT' })))).reason).toBe('wrong_audience');
    // A strict validator wants typ at+jwt.
    expect((await refusal(validator({}, { requireAccessTokenType: true }).validate(await forge({}, { typ: 'JWT' })))).reason).toBe('not_an_access_token');
  });

  it('never fetches nor trusts a key the token points at (jku, x5u, jwk)', async () => {
    const before = provider.hits('/jwks');
    const v = validator({ jwks_uri: provider.jwksUri });
    const claims = { iss: provider.issuer, aud: AUDIENCE, sub: 'mallory', exp: now() + 60, realm_access: { roles: ['registry-admins'] } };
    const pointers = { jku: attacker.url, x5u: attacker.url, jwk: attacker.jwk };
    // Under the attacker's own kid: no such key at the issuer.
    expect((await refusal(v.validate(await attacker.sign(claims, { ...pointers, kid: 'attacker' })))).reason).toBe('unknown_key');
    // Under the provider's kid: the provider's key does not verify the attacker's signature.
    expect((await refusal(v.validate(await attacker.sign(claims, { ...pointers, kid: provider.signingKey.kid })))).reason).toBe('bad_signature');
    // Without kid.
    expect((await refusal(v.validate(await attacker.sign(claims, pointers)))).reason).toBe('bad_signature');
    expect(attacker.hits()).toBe(0);
    expect(provider.hits('/jwks') - before).toBeGreaterThan(0);
  });

  it('refuses a key whose type does not fit the alg (ES256 header, RSA key under that kid)', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({ iss: provider.issuer, aud: AUDIENCE, sub: 'x', exp: now() + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: provider.signingKey.kid, typ: 'at+jwt' })
      .sign(privateKey);
    expect((await refusal(validator().validate(token))).reason).toBe('unknown_key');
  });

  it('refuses a flood of unknown kids with a bounded number of JWKS fetches', async () => {
    const v = validator({ jwks_uri: provider.jwksUri }, { refetchCooldownSecs: 30 });
    await v.validate(await provider.accessToken('ci-publisher'));
    const before = provider.hits('/jwks');
    const claims = { iss: provider.issuer, aud: AUDIENCE, sub: 'mallory', exp: now() + 60 };
    const tokens = await Promise.all(Array.from({ length: 100 }, (_, i) => attacker.sign(claims, { kid: `unknown-${i}` })));
    const reasons = await Promise.all(tokens.map(async (t) => (await refusal(v.validate(t))).reason));
    expect(new Set(reasons)).toEqual(new Set(['unknown_key']));
    // One fetch for the first unknown kid (the provider may have rotated), then the cooldown holds.
    expect(provider.hits('/jwks') - before).toBeLessThanOrEqual(1);
  });

  it('refuses garbage without echoing it', async () => {
    const secretish = 'svc_sk_not-a-jwt-at-all';
    const { reason, message } = await refusal(validator().validate(secretish));
    expect(reason).toBe('malformed');
    expect(message).not.toContain(secretish);
    const forged = await forge({ exp: now() - 999 });
    expect((await refusal(validator().validate(forged))).message).not.toContain(forged.split('.')[1]!);
  });
});
