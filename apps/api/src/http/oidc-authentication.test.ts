import { readFile, writeFile } from 'node:fs/promises';
import type { PlatformConfig } from '@agent-platform/contracts';
import { startAttackerKeyServer, startOidcProvider, tokenForger, type AttackerKeyServer, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { probeRoutes } from '../testing/probe-routes.ts';
import { startTestApi, type DeepPartial, type TestApi } from '../testing/index.ts';

// One real OpenID provider (oidc-provider on loopback) for the whole file issues the good tokens;
// the bad ones are forged (most signed with the provider's own key) so that each is refused for
// the one reason it is built to show, over the real api.
const AUDIENCE = 'https://api.test.example';

let provider: OidcProviderHarness;
let attacker: AttackerKeyServer;
let forger: ReturnType<typeof tokenForger>;
let api: TestApi | undefined;

beforeAll(async () => {
  provider = await startOidcProvider({
    audience: AUDIENCE,
    clients: { 'ops-bot': { roles: ['platform-ops', 'staff'] }, 'watcher': { roles: ['staff'] }, 'guest-bot': { roles: ['guests'] } },
  });
  attacker = await startAttackerKeyServer();
  forger = tokenForger(provider, { audience: AUDIENCE, roles: ['staff'] });
});

afterAll(async () => {
  await provider?.close();
  await attacker?.close();
});

afterEach(async () => {
  await api?.close();
  api = undefined;
});

function oidcConfig(oidc: DeepPartial<PlatformConfig['auth']['oidc']> = {}, auth: DeepPartial<PlatformConfig['auth']> = {}): DeepPartial<PlatformConfig> {
  return {
    auth: {
      mode: 'oidc',
      ...auth,
      oidc: {
        issuer: provider.issuer,
        audience: AUDIENCE,
        role_claim: 'realm_access.roles',
        allowed_algorithms: ['RS256'],
        role_mapping: { 'platform-ops': 'operator', staff: 'viewer' },
        ...oidc,
      },
    },
  };
}

async function start(oidc: DeepPartial<PlatformConfig['auth']['oidc']> = {}, auth: DeepPartial<PlatformConfig['auth']> = {}): Promise<TestApi> {
  api = await startTestApi({ config: oidcConfig(oidc, auth), routes: [probeRoutes()] });
  return api;
}

describe('auth mode oidc: tokens of a real OpenID provider', () => {
  it('serves a mapped role what it may do, 403 on what it may not, and whoami shows the external identity', async () => {
    const api = await start();
    const viewer = await provider.accessToken('watcher');
    const operator = await provider.accessToken('ops-bot');

    const whoami = await api.request('GET', '/auth/whoami', { token: viewer });
    expect(whoami).toMatchObject({ status: 200, body: { identity: 'oidc:watcher', role: 'viewer', key_id: null, issuer: provider.issuer, subject: 'watcher' } });
    // AgentStatus is open to viewers; AgentInvoke is not.
    expect((await api.request('GET', '/probe/agents/7c9e6679-7425-40de-944b-e07fc1f90ae7', { token: viewer })).status).toBe(200);
    const denied = await api.request('POST', '/probe/echo', { token: viewer, body: { message: 'hi' } });
    expect(denied).toMatchObject({ status: 403, body: { error: 'forbidden', message: 'role viewer may not perform AgentInvoke' } });

    // The most privileged mapped role wins (operator over viewer), and the request is audited under oidc:<sub>.
    const ok = await api.request('POST', '/probe/echo', { token: operator, body: { message: 'hi' } });
    expect(ok.status).toBe(200);
    const [entry] = await api.deps.audit.query({ limit: 1 });
    expect(entry).toMatchObject({ category: 'request', identity: 'oidc:ops-bot', role: 'operator', action: 'POST /probe/echo', result: '200' });
    expect(JSON.stringify(await api.deps.audit.query({ limit: 10 }))).not.toContain(operator.split('.')[2]);
  });

  it('answers 403, not 401, to a valid token with no mapped role, naming the claim and its values', async () => {
    const api = await start();
    const res = await api.request('GET', '/auth/whoami', { token: await provider.accessToken('guest-bot') });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
    expect(res.body.message).toContain("claim 'realm_access.roles' holds 'guests'");
    expect(res.body.message).toContain('role_mapping');
    const [entry] = await api.deps.audit.query({ limit: 1 });
    expect(entry).toMatchObject({ category: 'access', identity: 'oidc:guest-bot', result: '403' });
  });

  it('discovers the JWKS from the issuer and caches it: many requests, one fetch', async () => {
    const api = await start({ jwks_uri: '' });
    const token = await provider.accessToken('watcher');
    const discoveries = provider.hits('/.well-known/openid-configuration');
    const fetches = provider.hits('/jwks');
    for (let i = 0; i < 5; i++) expect((await api.request('GET', '/auth/whoami', { token })).status).toBe(200);
    expect(provider.hits('/.well-known/openid-configuration') - discoveries).toBe(1);
    expect(provider.hits('/jwks') - fetches).toBe(1);
  });
});

describe('auth mode oidc: refused tokens (401, audited, never the token)', () => {
  it('refuses every forged or misused token of the list', async () => {
    const api = await start({ jwks_uri: provider.jwksUri }, { rate_limit: { max_failed_attempts: 1000 } });
    const now = forger.now();
    const pointers = { jku: attacker.url, x5u: attacker.url, jwk: attacker.jwk };
    const attackerClaims = { iss: provider.issuer, aud: AUDIENCE, sub: 'mallory', exp: now + 60, realm_access: { roles: ['platform-ops'] } };
    const cases: [string, string, RegExp][] = [
      ['alg none', forger.unsigned(), /unsigned token \(alg 'none'\) refused/],
      ...(await forger.hmacWithPublicKey()).map((t, i): [string, string, RegExp] => [`HS256 with the public key #${i}`, t, /algorithm 'HS256' is not allowed/]),
      ['wrong issuer', await forger.forge({ iss: `${provider.issuer}/other` }), /token issuer is not/],
      ['wrong audience', await forger.forge({ aud: 'https://other-api.example' }), /token audience does not include https:\/\/api\.test\.example/],
      ['expired', await forger.forge({ exp: now - 120 }), /token expired/],
      ['future nbf', await forger.forge({ nbf: now + 120 }), /not valid yet/],
      ['unknown kid', await forger.forge({}, { kid: 'rotated-away' }), /no key of issuer .* matches/],
      ['jku/x5u/jwk, attacker kid', await attacker.sign(attackerClaims, { ...pointers, kid: 'attacker' }), /no key of issuer .* matches/],
      ['jku/x5u/jwk, provider kid', await attacker.sign(attackerClaims, { ...pointers, kid: provider.signingKey.kid }), /signature does not verify/],
      ['jku/x5u/jwk, no kid', await attacker.sign(attackerClaims, pointers), /signature does not verify/],
      ['ID token', await forger.forge({ nonce: 'n-0S6_WzA2Mj', at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q', azp: 'web-app' }, { typ: 'JWT' }), /not an access token/],
      ['ID token typ', await forger.forge({}, { typ: 'id+jwt' }), /not an access token/],
      ['garbage', 'not-a-jwt', /malformed token/],
    ];
    for (const [name, token, message] of cases) {
      const res = await api.request('GET', '/auth/whoami', { token });
      expect({ name, status: res.status, category: res.body.error?.category }).toEqual({ name, status: 401, category: 'AuthError' });
      expect(res.body.error.message, name).toMatch(/^invalid access token: /);
      expect(res.body.error.message, name).toMatch(message);
    }
    // Within the clock tolerance (30 s by default), the same forged shapes are fine: the refusals above are for their reason.
    expect((await api.request('GET', '/auth/whoami', { token: await forger.forge({ exp: now - 10, nbf: now + 10 }) })).status).toBe(200);
    expect(attacker.hits()).toBe(0);

    const failures = await api.deps.audit.query({ limit: 100, category: 'auth' });
    expect(failures).toHaveLength(cases.length);
    expect(failures[0]).toMatchObject({ identity: 'anonymous', result: 'failure', action: 'GET /auth/whoami', metadata: { reason: 'invalid_token', refusal: 'malformed' } });
    const logged = JSON.stringify(failures) + api.logs().join('\n');
    for (const [, token] of cases) expect(logged).not.toContain(token.split('.')[1] || token);
  });

  it('counts failed tokens towards the lockout like bad keys', async () => {
    const api = await start({}, { rate_limit: { max_failed_attempts: 2, base_backoff_secs: 30, max_backoff_secs: 300 } });
    const expired = await forger.forge({ exp: forger.now() - 600 });
    for (let i = 0; i < 3; i++) expect((await api.request('GET', '/auth/whoami', { token: expired })).status).toBe(401);
    const locked = await api.request('GET', '/auth/whoami', { token: expired });
    expect(locked.status).toBe(429);
    expect(locked.body.error.category).toBe('RateLimited');
    // A valid token is still served from the locked-out client.
    expect((await api.request('GET', '/auth/whoami', { token: await provider.accessToken('watcher') })).status).toBe(200);
  });

  it('turns a flood of 100 unknown kids into a bounded number of JWKS fetches', async () => {
    const api = await start({ jwks_uri: provider.jwksUri, refetch_cooldown_secs: 60 }, { rate_limit: { max_failed_attempts: 1000 } });
    expect((await api.request('GET', '/auth/whoami', { token: await provider.accessToken('watcher') })).status).toBe(200);
    const before = provider.hits('/jwks');
    const tokens = await Promise.all(Array.from({ length: 100 }, (_, i) => forger.forge({}, { kid: `unknown-${i}` })));
    const statuses = await Promise.all(tokens.map(async (token) => (await api.request('GET', '/auth/whoami', { token })).status));
    expect(new Set(statuses)).toEqual(new Set([401]));
    // At most one refetch (the provider may have rotated), then the cooldown holds.
    expect(provider.hits('/jwks') - before).toBeLessThanOrEqual(1);
  });

  it('answers 502 ProviderError when the identity provider cannot be reached for its keys', async () => {
    const api = await start({ jwks_uri: 'http://127.0.0.1:9/jwks' });
    const res = await api.request('GET', '/auth/whoami', { token: await forger.forge() });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ category: 'ProviderError', details: { issuer: provider.issuer } });
  });
});

describe('auth mode oidc: local API keys', () => {
  it('refuses svc_sk_ keys (and the bootstrap) without allow_local_service_keys', async () => {
    const api = await start();
    const key = await api.issueKey('admin', 'ci');
    const res = await api.request('GET', '/auth/whoami', { token: key });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toContain('allow_local_service_keys = false');
    // No bootstrap bypass in oidc mode without local keys.
    const bootstrap = await api.request('POST', '/auth/keys', { body: { name: 'first', role: 'admin' } });
    expect(bootstrap.status).toBe(401);
  });

  it('accepts them with allow_local_service_keys, and the first key bootstraps as in mode local', async () => {
    const api = await start({}, { allow_local_service_keys: true });
    const first = await api.request('POST', '/auth/keys', { body: { name: 'first', role: 'admin' } });
    expect(first.status).toBe(200);
    const whoami = await api.request('GET', '/auth/whoami', { token: first.body.secret });
    expect(whoami.body).toEqual({ identity: 'first', role: 'admin', key_id: first.body.id });
    expect((await api.request('POST', '/auth/keys', { body: { name: 'second', role: 'admin' } })).status).toBe(401);
    // Tokens still work beside keys.
    expect((await api.request('GET', '/auth/whoami', { token: await provider.accessToken('ops-bot') })).body.role).toBe('operator');
    expect((await api.request('GET', '/auth/whoami', { token: 'svc_sk_wrong' })).status).toBe(401);
  });
});

describe('auth mode oidc: config', () => {
  it('refuses to boot without issuer, naming the missing keys', async () => {
    await expect(startTestApi({ config: { auth: { mode: 'oidc', oidc: { audience: AUDIENCE } } } })).rejects.toThrow(/auth\.oidc\.issuer, auth\.oidc\.role_claim/);
  });

  it('refuses HS256 in allowed_algorithms and a role_mapping value that is not one of the six roles', async () => {
    await expect(start({ allowed_algorithms: ['RS256', 'HS256'] })).rejects.toThrow(/auth\.oidc\.allowed_algorithms: algorithm 'HS256' is never allowed/);
    await expect(start({ role_mapping: { staff: 'superuser' as never } })).rejects.toThrow(/auth\.oidc\.role_mapping/);
  });

  it('rebuilds the validator when [auth.oidc] changes on reload', async () => {
    const api = await start({ role_mapping: { staff: 'viewer' } }, { allow_local_service_keys: true });
    const admin = await api.issueKey('admin', 'ops');
    const token = await provider.accessToken('watcher');
    expect((await api.request('GET', '/auth/whoami', { token })).body.role).toBe('viewer');
    const text = await readFile(api.configPath, 'utf8');
    expect(text).toContain('staff = "viewer"');
    await writeFile(api.configPath, text.replace('staff = "viewer"', 'staff = "auditor"'));
    expect((await api.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    expect((await api.request('GET', '/auth/whoami', { token })).body.role).toBe('auditor');
  });
});
