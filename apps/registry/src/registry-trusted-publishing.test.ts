import { defaultConfig } from '@agent-platform/config';
import { fixedClock } from '@agent-platform/domain';
import { startOidcProvider, tokenForger, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { openExampleArchives, registryCall, renamed, type ExampleArchives, type RegistryAnswer, type RegistryCallOptions } from '@agent-platform/registry-core/testing';
import { generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRegistry, type TestRegistry } from './testing/test-registry.ts';

// Trusted publishing over HTTP (docs/registry-auth.md "Trusted publishing"): a registry with the
// real auth hook in mode oidc (registry keys allowed), two real OpenID providers on loopback
// standing in for CI issuers. CI tokens are signed with a provider's real key and carry CI-style
// claims (repository, workflow, sha, ref) and no role: used as a bearer they are nobody, exchanged
// they publish exactly the packages that trust them, and the version says where it came from.
const AUDIENCE = 'https://registry.test.example';
const REPO = { repository: 'acme/claims-desk', workflow: 'release.yml' };

let ci: OidcProviderHarness;
let other: OidcProviderHarness;
let examples: ExampleArchives;
let registry: TestRegistry;
let clock: ReturnType<typeof fixedClock>;
let admin: string;
let alice: string;

beforeAll(async () => {
  [ci, other] = await Promise.all([startOidcProvider({ audience: AUDIENCE, clients: {} }), startOidcProvider({ audience: AUDIENCE, clients: {} })]);
  examples = await openExampleArchives();
});
afterAll(async () => {
  await ci?.close();
  await other?.close();
  await examples?.close();
});
beforeEach(async () => {
  clock = fixedClock(new Date());
  registry = await startTestRegistry({ realAuth: true, clock, registry: { auth: { ...defaultConfig().registry.auth, mode: 'oidc', allow_local_keys: true } } });
  admin = (await send('POST', '/keys', { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
  alice = (await send('POST', '/keys', { bearer: admin, json: { name: 'alice', role: 'publisher' } })).body.secret;
  for (const provider of [ci, other]) {
    // A CI issuer maps no role its tokens carry: alone, its tokens are nobody (403 as a bearer).
    const registered = await send('POST', '/admin/issuers', {
      bearer: admin,
      json: { issuer: provider.issuer, audience: AUDIENCE, jwks_uri: '', role_claim: 'registry_role', allowed_algorithms: ['RS256'], role_mapping: { never: 'reader' }, jwks_cache_ttl_secs: 300 },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  }
  for (const name of ['claims-desk', 'motor-desk']) expect((await send('POST', '/packages', { bearer: alice, archive: await archive(name) })).status).toBe(201);
});
afterEach(async () => registry?.close());

function send(method: string, path: string, options: RegistryCallOptions = {}): Promise<RegistryAnswer> {
  return registryCall(registry.url, method, path, options);
}

async function archive(name: string, version = '1.0.0'): Promise<Uint8Array> {
  return renamed(await examples.build('loss-summary', { version }), name);
}

/** A CI job's OIDC token (as GitHub Actions sends: typ JWT, no role), signed by `provider`'s real key. */
function ciToken(claims: JWTPayload = {}, provider = ci): Promise<string> {
  return tokenForger(provider, { audience: AUDIENCE, roles: [] }).forge(
    { sub: 'repo:acme/claims-desk:ref:refs/heads/main', ...REPO, sha: 'f00dfeed', ref: 'refs/heads/main', run_id: '4242', actor: 'bob', realm_access: undefined, ...claims },
    { typ: 'JWT' },
  );
}

const trust = (name: string, publishers: unknown[], bearer = alice) => send('PUT', `/packages/${name}/trusted-publishers`, { bearer, json: { publishers } });
const exchange = (token: string) => send('POST', '/trusted-publishing/exchange', { json: { token } });

describe('trusted publishing', () => {
  it('exchanges a matching CI token for a 15-minute token that publishes and records provenance', async () => {
    const set = await trust('claims-desk', [{ issuer: ci.issuer, claims: REPO }]);
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await send('GET', '/packages/claims-desk/trusted-publishers', { bearer: alice })).body).toEqual({ publishers: [{ issuer: ci.issuer, claims: REPO }] });

    const jwt = await ciToken();
    // As a bearer the CI token is nobody: its issuer maps no role it carries.
    expect((await send('GET', '/auth/whoami', { bearer: jwt })).status).toBe(403);

    const minted = await exchange(jwt);
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    const identity = `${ci.issuer}#repo:acme/claims-desk:ref:refs/heads/main`;
    expect(minted.body).toMatchObject({ packages: ['claims-desk'], identity, expires_at: new Date(clock.now().getTime() + 15 * 60_000).toISOString() });
    expect(minted.body.token).toMatch(/^reg_pt_/);

    const published = await send('POST', '/packages', { bearer: minted.body.token, archive: await archive('claims-desk', '1.1.0') });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    const provenance = {
      kind: 'trusted-publishing',
      identity,
      issuer: ci.issuer,
      // The required claims and the run's (sha, ref, run_id); not the others (actor).
      claims: { ...REPO, sha: 'f00dfeed', ref: 'refs/heads/main', run_id: '4242' },
    };
    expect(published.body).toMatchObject({ published_by: identity, provenance });
    expect((await send('GET', '/packages/claims-desk/1.1.0')).body.provenance).toEqual(provenance);
    const versions = (await send('GET', '/packages/claims-desk/versions')).body.versions;
    expect(versions.map((v: { version: string; provenance: unknown }) => [v.version, v.provenance])).toEqual([
      ['1.1.0', provenance],
      ['1.0.0', null],
    ]);
    // Publishing did not make the CI identity an owner.
    expect((await send('GET', '/packages/claims-desk')).body.owners).toEqual(['key:alice']);
    const history = (await send('GET', '/packages/claims-desk/history')).body.entries;
    expect(history.map((e: { action: string; identity: string }) => [e.action, e.identity])).toEqual([
      ['publish', 'key:alice'],
      ['trusted-publishers', 'key:alice'],
      ['publish', identity],
    ]);
    expect(history[1].trusted_publishers).toEqual([{ issuer: ci.issuer, claims: REPO }]);
    expect(history[2].provenance).toEqual(provenance);

    // Audited (category keys), never the CI token nor the minted secret.
    const audit = (await registry.engines.store.log<{ action: string; identity: string; metadata: Record<string, unknown> }>('audit').list({ limit: 50 })).filter(
      (e) => e.action === 'registry.trusted_publishing.exchanged',
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ identity, metadata: { issuer: ci.issuer, packages: ['claims-desk'] } });
    expect(JSON.stringify(audit)).not.toContain(jwt);
    expect(JSON.stringify(audit)).not.toContain(minted.body.token);
  });

  it('refuses a wrong claim, another issuer, an expired JWT, a wrong audience and a forged signature', async () => {
    await trust('claims-desk', [{ issuer: ci.issuer, claims: REPO }]);
    const noMatch = await exchange(await ciToken({ repository: 'evil/claims-desk' }));
    expect(noMatch.status).toBe(403);
    expect(noMatch.body.error.category).toBe('PermissionDenied');
    expect(noMatch.body.error.message).toContain('no package trusts this CI identity');
    expect(noMatch.body.error.message).not.toContain('claims-desk');
    // The same claims from another registered issuer match nothing: the issuer is part of the identity.
    expect((await exchange(await ciToken({}, other))).status).toBe(403);
    // A missing claim is not a match either.
    expect((await exchange(await ciToken({ workflow: undefined }))).status).toBe(403);

    const now = Math.floor(Date.now() / 1000);
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ iss: ci.issuer, aud: AUDIENCE, sub: 'repo:acme/claims-desk:ref:refs/heads/main', exp: now + 300, ...REPO })
      .setProtectedHeader({ alg: 'RS256', kid: ci.signingKey.kid, typ: 'JWT' })
      .sign(privateKey);
    for (const [why, token, message] of [
      ['expired', await ciToken({ exp: now - 300 }), 'token expired'],
      ['wrong audience', await ciToken({ aud: 'https://elsewhere.example' }), 'token audience does not include'],
      ['forged signature', forged, 'signature does not verify'],
      ['unregistered issuer', await ciToken({ iss: 'https://ci.unknown.example' }), 'not registered'],
      ['not a JWT', 'not-a-jwt', 'malformed'],
    ] as const) {
      const refused = await exchange(token);
      expect(refused.status, why).toBe(401);
      expect(refused.body.error.message, why).toContain(message);
    }
    expect(registry.logs()).toContain('registry authentication failed');
    expect(registry.logs()).not.toContain(forged);
  });

  it('the minted token publishes only its packages, does nothing else, stops when no longer trusted, and expires', async () => {
    await trust('claims-desk', [{ issuer: ci.issuer, claims: REPO }]);
    const token: string = (await exchange(await ciToken())).body.token;

    const outside = await send('POST', '/packages', { bearer: token, archive: await archive('motor-desk', '1.1.0') });
    expect(outside.status).toBe(403);
    expect(outside.body.error.message).toContain("'motor-desk' is not one of them");
    expect((await send('POST', '/packages', { bearer: token, archive: await archive('claims-new') })).status).toBe(403);
    expect((await send('POST', '/packages/claims-desk/1.0.0/yank', { bearer: token, json: { reason: 'x' } })).status).toBe(403);
    expect((await send('PUT', '/packages/claims-desk/owners', { bearer: token, json: { owners: ['key:alice'] } })).status).toBe(403);
    expect((await trust('claims-desk', [], token)).status).toBe(403);
    const deprecate = await send('PUT', '/packages/claims-desk/deprecation', { bearer: token, json: { message: 'gone' } });
    expect(deprecate.status).toBe(403);
    expect(deprecate.body.error.message).toContain('a trusted publishing token only publishes new versions');
    expect((await send('POST', '/tokens', { bearer: token, json: { name: 'wider', scopes: ['publish-new'] } })).status).toBe(403);
    expect((await send('GET', '/packages/claims-desk')).body).toMatchObject({ versions: ['1.0.0'], owners: ['key:alice'], deprecated: null });

    expect((await send('POST', '/packages', { bearer: token, archive: await archive('claims-desk', '1.1.0') })).status).toBe(201);
    // The owner changes the workflow it trusts: the token minted before stops publishing at once.
    await trust('claims-desk', [{ issuer: ci.issuer, claims: { ...REPO, workflow: 'publish.yml' } }]);
    const untrusted = await send('POST', '/packages', { bearer: token, archive: await archive('claims-desk', '1.2.0') });
    expect(untrusted.status).toBe(403);
    expect(untrusted.body.error.message).toContain('no longer trusts this CI identity');

    const again: string = (await exchange(await ciToken({ workflow: 'publish.yml' }))).body.token;
    expect((await send('GET', '/auth/whoami', { bearer: again })).status).toBe(200);
    clock.advance(15 * 60_000 + 1_000);
    const expired = await send('POST', '/packages', { bearer: again, archive: await archive('claims-desk', '1.2.0') });
    expect(expired.status).toBe(401);
    expect((await send('GET', '/packages/claims-desk')).body.versions).toEqual(['1.1.0', '1.0.0']);
  });

  it('one token covers every package trusting the identity; only owners configure, with a 400 that changes nothing', async () => {
    await trust('claims-desk', [{ issuer: ci.issuer, claims: REPO }]);
    await trust('motor-desk', [{ issuer: other.issuer, claims: { repository: 'acme/motor' } }, { issuer: ci.issuer, claims: { repository: REPO.repository } }]);
    expect((await exchange(await ciToken())).body.packages).toEqual(['claims-desk', 'motor-desk']);

    const bob: string = (await send('POST', '/keys', { bearer: admin, json: { name: 'bob', role: 'publisher' } })).body.secret;
    expect((await trust('claims-desk', [{ issuer: ci.issuer, claims: { repository: 'bob/x' } }], bob)).status).toBe(403);
    expect((await send('GET', '/packages/claims-desk/trusted-publishers', { bearer: bob })).status).toBe(403);
    const ownersOnly: string = (await send('POST', '/tokens', { bearer: alice, json: { name: 'x', scopes: ['publish-update'] } })).body.secret;
    expect((await trust('claims-desk', [], ownersOnly)).status).toBe(403);
    expect((await trust('no-such-pkg', [])).status).toBe(404);

    for (const publishers of [
      [{ issuer: 'https://ci.unknown.example', claims: REPO }],
      [{ issuer: ci.issuer, claims: {} }],
      [{ issuer: ci.issuer, claims: { aud: AUDIENCE } }],
      [{ issuer: ci.issuer, claims: { sub: 'x', iss: ci.issuer } }],
      [{ issuer: ci.issuer, claims: { repository: ' ' } }],
      [{ issuer: ci.issuer, claims: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`c${i}`, 'v'])) }],
      [{ issuer: ci.issuer, claims: REPO, extra: true }],
    ]) {
      const refused = await trust('claims-desk', publishers);
      expect(refused.status, JSON.stringify(publishers)).toBe(400);
      expect(refused.body.error.category).toBe('ValidationError');
    }
    // A claim of the wrong JSON type is 422 MalformedBody (spec: wrong field type), nothing changed either.
    expect((await trust('claims-desk', [{ issuer: ci.issuer, claims: { repository: 7 } }])).body.error.category).toBe('MalformedBody');
    expect((await send('GET', '/packages/claims-desk/trusted-publishers', { bearer: alice })).body.publishers).toEqual([{ issuer: ci.issuer, claims: REPO }]);
    // An admin may; an empty list turns it off.
    expect((await trust('claims-desk', [], admin)).body).toEqual({ publishers: [] });
    expect((await exchange(await ciToken())).body.packages).toEqual(['motor-desk']);
  });

  it('counts refused exchanges towards the lockout, still serving a valid one', async () => {
    await trust('claims-desk', [{ issuer: ci.issuer, claims: REPO }]);
    const expired = await ciToken({ exp: Math.floor(Date.now() / 1000) - 300 });
    for (let i = 0; i < 10; i++) expect((await exchange(expired)).status).toBe(401);
    expect((await exchange(expired)).status).toBe(401);
    const locked = await exchange(expired);
    expect(locked.status).toBe(429);
    expect(locked.body.error.category).toBe('RateLimited');
    // Bad bearer credentials share the count (one client, one lockout).
    expect((await send('GET', '/auth/whoami', { bearer: 'reg_sk_guess' })).status).toBe(429);
    expect((await exchange(await ciToken())).status).toBe(201);
  });
});
