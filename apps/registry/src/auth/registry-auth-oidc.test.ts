import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importJWK, SignJWT } from 'jose';
import { startOidcProvider, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { freePort } from '@agent-platform/testkit';
import { ACCESS_LEVELS, startRegistryAuthHarness, type RegistryAuthHarness } from '../testing/registry-auth-harness.ts';

// Mode oidc over a real listener, with tokens from a real OpenID provider on loopback: issuers
// managed through /admin/issuers take effect on the next request.
const AUDIENCE = 'https://registry.test.example';
let provider: OidcProviderHarness;
let h: RegistryAuthHarness;
let admin: string;

beforeAll(async () => {
  provider = await startOidcProvider({
    audience: AUDIENCE,
    clients: {
      'ops-admin': { roles: ['registry-admins'] },
      'ci-publisher': { roles: ['publishers'] },
      'staff-reader': { roles: ['staff'] },
      'guest-bot': { roles: ['guests'] },
    },
  });
});
afterAll(async () => provider?.close());

beforeEach(async () => {
  h = await startRegistryAuthHarness({ mode: 'oidc', allow_local_keys: true });
  admin = (await h.call('POST', '/keys', { body: { name: 'bootstrap-admin', role: 'registry-admin' } })).body.secret;
});
afterEach(async () => h?.close());

function issuerBody(overrides: Record<string, unknown> = {}) {
  return {
    issuer: provider.issuer,
    audience: AUDIENCE,
    jwks_uri: '',
    role_claim: 'realm_access.roles',
    allowed_algorithms: ['RS256'],
    role_mapping: { 'registry-admins': 'registry-admin', publishers: 'publisher', staff: 'reader' },
    jwks_cache_ttl_secs: 300,
    ...overrides,
  };
}

async function register(overrides: Record<string, unknown> = {}): Promise<string> {
  const created = await h.call('POST', '/admin/issuers', { bearer: admin, body: issuerBody(overrides) });
  expect(created.status).toBe(201);
  return created.body.id;
}

describe('mode oidc', () => {
  it('accepts a token of an issuer from the request after its registration, and refuses it after its deletion', async () => {
    const token = await provider.accessToken('ci-publisher');
    const before = await h.probe('publish', token);
    expect(before.status).toBe(401);
    expect(before.body.error.message).toBe('invalid access token: the token issuer is not registered with this registry (GET /admin/issuers)');

    const id = await register();
    expect((await h.probe('publish', token)).status).toBe(200);
    expect((await h.call('GET', '/auth/whoami', { bearer: token })).body).toEqual({
      // Qualified by its issuer (docs/registry-auth.md "Identities").
      identity: `${provider.issuer}#ci-publisher`,
      role: 'publisher',
      authenticated: true,
      key_id: null,
      issuer: provider.issuer,
    });

    // A change of mapping is effective at once: the publisher is now a reader.
    expect((await h.call('PUT', `/admin/issuers/${id}`, { bearer: admin, body: issuerBody({ role_mapping: { publishers: 'reader' } }) })).status).toBe(200);
    expect((await h.probe('publish', token)).status).toBe(403);

    expect((await h.call('DELETE', `/admin/issuers/${id}`, { bearer: admin })).status).toBe(204);
    expect((await h.probe('authenticated', token)).status).toBe(401);
    expect((await h.probe('read', token)).status).toBe(401);
  });

  it('maps roles to access levels: 401 without identity, 403 without the role or without any mapped role', async () => {
    await register();
    const tokens: Record<string, string | undefined> = {
      anonymous: undefined,
      reader: await provider.accessToken('staff-reader'),
      publisher: await provider.accessToken('ci-publisher'),
      admin: await provider.accessToken('ops-admin'),
    };
    const expected: Record<string, number[]> = {
      anonymous: [200, 200, 200, 401, 401, 401],
      reader: [200, 200, 200, 200, 403, 403],
      publisher: [200, 200, 200, 200, 200, 403],
      admin: [200, 200, 200, 200, 200, 200],
    };
    for (const [who, statuses] of Object.entries(expected)) {
      const got = [];
      for (const level of ACCESS_LEVELS) got.push((await h.probe(level, tokens[who])).status);
      expect(got, who).toEqual(statuses);
    }
    const guest = await h.probe('read', await provider.accessToken('guest-bot'));
    expect(guest.status).toBe(403);
    expect(guest.body.error).toBe('forbidden');
    expect(guest.body.message).toContain("carries no role this service maps (claim 'realm_access.roles'");
    // An OIDC registry-admin manages issuers and keys.
    expect((await h.call('GET', '/admin/issuers', { bearer: tokens.admin })).body.issuers).toHaveLength(1);
    expect((await h.call('GET', '/keys', { bearer: tokens.admin })).status).toBe(200);
  });

  it('takes registry keys only with allow_local_keys; /keys is then 503', async () => {
    await register();
    const publisherKey = (await h.call('POST', '/keys', { bearer: admin, body: { name: 'ci', role: 'publisher' } })).body.secret;
    expect((await h.probe('publish', publisherKey)).status).toBe(200);
    h.settings.auth.allow_local_keys = false;
    const refused = await h.probe('publish', publisherKey);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('registry keys are not accepted here');
    const adminToken = await provider.accessToken('ops-admin');
    expect(await h.call('GET', '/keys', { bearer: adminToken })).toMatchObject({ status: 503, body: { error: 'Auth is not enabled' } });
    expect((await h.call('POST', '/keys', { body: { name: 'x', role: 'registry-admin' } })).status).toBe(401);
  });

  it('refuses forged and misused tokens with 401, and honours read_requires_auth', async () => {
    await register();
    const key = await importJWK(provider.signingKey, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    const forge = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
      new SignJWT({ iss: provider.issuer, aud: AUDIENCE, sub: 'x', exp: now + 60, realm_access: { roles: ['staff'] }, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: provider.signingKey.kid, typ: 'at+jwt', ...header })
        .sign(key);
    expect((await h.probe('read', await forge({}))).status).toBe(200);
    const cases: Array<[string, Promise<string>, string]> = [
      ['expired', forge({ exp: now - 300 }), 'token expired'],
      ['wrong audience', forge({ aud: 'https://elsewhere.example' }), 'token audience does not include'],
      ['ID token', forge({ nonce: 'abc' }, { typ: 'JWT' }), 'not an access token'],
      ['not yet valid', forge({ nbf: now + 600 }), 'not valid yet'],
    ];
    for (const [name, token, message] of cases) {
      const refused = await h.probe('read', await token);
      expect(refused.status, name).toBe(401);
      expect(refused.body.error.message, name).toContain(message);
    }
    h.settings.auth.read_requires_auth = true;
    expect((await h.probe('read')).status).toBe(401);
    expect((await h.probe('read', await provider.accessToken('staff-reader'))).status).toBe(200);
  });

  it('answers 502 when the issuer keys cannot be fetched', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    await register({ issuer: dead });
    const key = await importJWK(provider.signingKey, 'RS256');
    const token = await new SignJWT({ iss: dead, aud: AUDIENCE, sub: 'x', exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'RS256', kid: 'k' })
      .sign(key);
    const answer = await h.probe('read', token);
    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatchObject({ category: 'ProviderError', details: { issuer: dead } });
  });
});

describe('issuers registered through the API are fetched through the private-target guard', () => {
  it('refuses a loopback issuer unless [network] allow_private_targets, with a 502 saying why', async () => {
    const guarded = await startRegistryAuthHarness({ mode: 'oidc', allow_local_keys: true }, { allowPrivateTargets: false });
    try {
      const key = (await guarded.call('POST', '/keys', { body: { name: 'bootstrap-admin', role: 'registry-admin' } })).body.secret;
      expect((await guarded.call('POST', '/admin/issuers', { bearer: key, body: issuerBody() })).status).toBe(201);
      const answer = await guarded.probe('read', await provider.accessToken('staff-reader'));
      expect(answer.status).toBe(502);
      expect(answer.body.error.category).toBe('ProviderError');
      expect(JSON.stringify(answer.body.error)).toMatch(/allow_private_targets/);
    } finally {
      await guarded.close();
    }
  });
});

describe('/admin/issuers', () => {
  it('validates bodies with clear 400s and changes nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ issuer: 'http://login.example.com' }, 'issuer must be https'],
      [{ allowed_algorithms: ['none'] }, "algorithm 'none' is never allowed"],
      [{ allowed_algorithms: ['HS256'] }, "algorithm 'HS256' is never allowed"],
      [{ role_mapping: { staff: 'admin' } }, 'role_mapping'],
      [{ jwks_uri: 'ftp://keys.example.com' }, 'jwks_uri must be an https URL'],
      [{ jwks_cache_ttl_secs: 0 }, 'jwks_cache_ttl_secs'],
    ];
    for (const [change, message] of cases) {
      const refused = await h.call('POST', '/admin/issuers', { bearer: admin, body: issuerBody(change) });
      expect(refused.status, message).toBe(400);
      expect(refused.body.error.category).toBe('ValidationError');
      expect(JSON.stringify(refused.body.error), message).toContain(message);
    }
    expect((await h.call('GET', '/admin/issuers', { bearer: admin })).body).toEqual({ issuers: [] });
  });

  it('lists, reads, replaces and deletes; 409 for a second registration of one issuer; 404 for an unknown id', async () => {
    const id = await register();
    expect((await h.call('POST', '/admin/issuers', { bearer: admin, body: issuerBody() })).status).toBe(409);
    const one = await h.call('GET', `/admin/issuers/${id}`, { bearer: admin });
    expect(one.body).toMatchObject({ id, ...issuerBody() });
    const replaced = await h.call('PUT', `/admin/issuers/${id}`, { bearer: admin, body: issuerBody({ jwks_cache_ttl_secs: 60 }) });
    expect(replaced.body.jwks_cache_ttl_secs).toBe(60);
    expect((await h.call('GET', '/admin/issuers', { bearer: admin })).body.issuers).toEqual([replaced.body]);
    expect((await h.call('DELETE', `/admin/issuers/${id}`, { bearer: admin })).status).toBe(204);
    expect((await h.call('GET', `/admin/issuers/${id}`, { bearer: admin })).status).toBe(404);
    expect((await h.call('DELETE', `/admin/issuers/${id}`, { bearer: admin })).status).toBe(404);
  });

  it('is for registry admins only', async () => {
    const publisherKey = (await h.call('POST', '/keys', { bearer: admin, body: { name: 'ci', role: 'publisher' } })).body.secret;
    expect((await h.call('GET', '/admin/issuers', { bearer: publisherKey })).status).toBe(403);
    expect((await h.call('POST', '/admin/issuers', { bearer: publisherKey, body: issuerBody() })).status).toBe(403);
    expect((await h.call('GET', '/admin/issuers')).status).toBe(401);
  });
});
