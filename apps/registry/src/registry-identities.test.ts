import { defaultConfig } from '@agent-platform/config';
import { systemClock } from '@agent-platform/domain';
import { createRegistryKeyService, migrateLegacyIdentities, registryRecords } from '@agent-platform/registry-core';
import { startOidcProvider, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { openExampleArchives, registryCall, seedVersions, type ExampleArchives, type RegistryAnswer, type RegistryCallOptions } from '@agent-platform/registry-core/testing';
import { decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestRegistry, type TestRegistry } from './testing/test-registry.ts';

// Registry identities are qualified by where they come from (docs/registry-auth.md "Identities"):
// a registry over a real listener with the real auth hook in mode oidc (registry keys allowed),
// two real OpenID providers on loopback, each with a client `alice`. A token of the second issuer
// with the same `sub`, and a local key named `alice`, are other callers than the first issuer's
// `alice`: they may not publish her package, yank it (onto the signed revocation feed) or take
// it over.
const AUDIENCE = 'https://registry.test.example';

let providerA: OidcProviderHarness;
let providerB: OidcProviderHarness;
let examples: ExampleArchives;
let registry: TestRegistry | undefined;

beforeAll(async () => {
  const clients = { alice: { roles: ['publishers'] }, 'read-only': { roles: ['staff'] } };
  [providerA, providerB] = await Promise.all([
    startOidcProvider({ audience: AUDIENCE, clients }),
    startOidcProvider({ audience: AUDIENCE, clients }),
  ]);
  examples = await openExampleArchives();
});
afterAll(async () => {
  await providerA?.close();
  await providerB?.close();
  await examples?.close();
});
afterEach(async () => {
  await registry?.close();
  registry = undefined;
});

function send(method: string, path: string, options: RegistryCallOptions = {}): Promise<RegistryAnswer> {
  return registryCall(registry!.url, method, path, options);
}

async function startOidcRegistry(): Promise<{ admin: string }> {
  const auth = { ...defaultConfig().registry.auth, mode: 'oidc' as const, allow_local_keys: true };
  registry = await startTestRegistry({ realAuth: true, registry: { auth } });
  const first = await send('POST', '/keys', { json: { name: 'admin', role: 'registry-admin' } });
  expect(first.status).toBe(201);
  const admin: string = first.body.secret;
  for (const provider of [providerA, providerB]) {
    const registered = await send('POST', '/admin/issuers', {
      bearer: admin,
      json: {
        issuer: provider.issuer,
        audience: AUDIENCE,
        jwks_uri: '',
        role_claim: 'realm_access.roles',
        allowed_algorithms: ['RS256'],
        role_mapping: { publishers: 'publisher', staff: 'reader' },
        jwks_cache_ttl_secs: 300,
      },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  }
  return { admin };
}

const yank = (bearer: string) =>
  send('POST', '/packages/loss-summary/1.0.0/yank', { bearer, json: { reason: 'hostile takeover', security: true } });

describe('registry identities', () => {
  it('refuses a second issuer with the same sub, and a local key named like the sub: publish, yank and owner change are 403', async () => {
    const { admin } = await startOidcRegistry();
    const aliceKey: string = (await send('POST', '/keys', { bearer: admin, json: { name: 'alice', role: 'publisher' } })).body.secret;
    const [tokenA, tokenB] = await Promise.all([providerA.accessToken('alice'), providerB.accessToken('alice')]);
    expect(decodeJwt(tokenB).sub).toBe(decodeJwt(tokenA).sub);
    const aliceA = `${providerA.issuer}#alice`;
    const aliceB = `${providerB.issuer}#alice`;

    expect((await send('GET', '/auth/whoami', { bearer: tokenA })).body).toMatchObject({ identity: aliceA, issuer: providerA.issuer });
    expect((await send('GET', '/auth/whoami', { bearer: tokenB })).body).toMatchObject({ identity: aliceB, issuer: providerB.issuer });
    expect((await send('GET', '/auth/whoami', { bearer: aliceKey })).body).toMatchObject({ identity: 'key:alice', issuer: null });

    const published = await send('POST', '/packages', { bearer: tokenA, archive: await examples.build('loss-summary') });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    expect(published.body.published_by).toBe(aliceA);

    const next = await examples.build('loss-summary', { version: '1.0.1' });
    for (const [who, bearer] of [
      ['second issuer, same sub', tokenB],
      ['local key named alice', aliceKey],
    ] as const) {
      const publish = await send('POST', '/packages', { bearer, archive: next });
      expect(publish.status, `${who} publish: ${JSON.stringify(publish.body)}`).toBe(403);
      expect(publish.body.error.category).toBe('PermissionDenied');
      expect(publish.body.error.message).toContain(`belongs to ${aliceA}`);
      expect((await yank(bearer)).status, `${who} yank`).toBe(403);
      const takeover = await send('PUT', '/packages/loss-summary/owners', { bearer, json: { owners: [aliceB, 'key:alice'] } });
      expect(takeover.status, `${who} owners`).toBe(403);
    }
    // Nothing changed: no new version, nothing yanked, nothing on the signed revocation feed, same owners.
    const pkg = (await send('GET', '/packages/loss-summary')).body;
    expect(pkg).toMatchObject({ owners: [aliceA], versions: ['1.0.0'], latest: '1.0.0' });
    const feed = (await send('GET', '/revocations?since=0')).body.feed as string;
    expect(decodeJwt(feed)).toMatchObject({ latest_seq: 0, revocations: [] });

    // The owner invites her key as well, by its qualified name; once the key accepts, it may publish.
    const shared = await send('PUT', '/packages/loss-summary/owners', { bearer: tokenA, json: { owners: [aliceA, 'key:alice'] } });
    expect(shared.status, JSON.stringify(shared.body)).toBe(200);
    expect(shared.body.pending_owners).toMatchObject([{ owner: 'key:alice', invited_by: aliceA }]);
    expect((await send('POST', '/packages/loss-summary/owners/accept', { bearer: aliceKey, json: {} })).body.owners).toEqual([aliceA, 'key:alice']);
    expect((await send('POST', '/packages', { bearer: aliceKey, archive: next })).status).toBe(201);
    expect((await yank(tokenB)).status).toBe(403);
    const history = (await send('GET', '/packages/loss-summary/history')).body.entries;
    expect(history.map((e: { action: string; identity: string }) => [e.action, e.identity])).toEqual([
      ['publish', aliceA],
      ['owners', aliceA],
      ['owners', 'key:alice'],
      ['publish', 'key:alice'],
    ]);
  }, 60_000);

  it('takes owners only as qualified identities the registry knows: 400 naming the owner otherwise, nothing changed', async () => {
    const { admin } = await startOidcRegistry();
    const tokenA = await providerA.accessToken('alice');
    await send('POST', '/keys', { bearer: admin, json: { name: 'retired', role: 'publisher' } }).then(async (k) =>
      send('DELETE', `/keys/${k.body.id}`, { bearer: admin }),
    );
    expect((await send('POST', '/packages', { bearer: tokenA, archive: await examples.build('loss-summary') })).status).toBe(201);
    const cases: Array<[string, string]> = [
      ['alice', 'is not a qualified identity'],
      ['key:nobody', 'names no registry key in use'],
      ['key:retired', 'names no registry key in use'],
      ['https://idp.elsewhere.example#alice', 'names an issuer this registry does not know'],
    ];
    for (const [owner, message] of cases) {
      const refused = await send('PUT', '/packages/loss-summary/owners', { bearer: tokenA, json: { owners: [owner] } });
      expect(refused.status, owner).toBe(400);
      expect(refused.body.error.category).toBe('ValidationError');
      expect(refused.body.error.message).toContain(`owner '${owner}' ${message}`);
    }
    expect((await send('GET', '/packages/loss-summary')).body.owners).toEqual([`${providerA.issuer}#alice`]);
    // Any subject of a registered issuer is accepted (the provider cannot be asked), and so is a key in use.
    const ok = await send('PUT', '/packages/loss-summary/owners', { bearer: admin, json: { owners: [`${providerB.issuer}#bob`, 'key:admin'] } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  }, 60_000);

  it('answers a role refusal on publish, yank and owner change with the spec flat 403, not 500', async () => {
    const { admin } = await startOidcRegistry();
    const reader: string = (await send('POST', '/keys', { bearer: admin, json: { name: 'viewer', role: 'reader' } })).body.secret;
    const readerToken = await providerA.accessToken('read-only');
    for (const bearer of [reader, readerToken]) {
      const answers = [
        await send('POST', '/packages', { bearer, archive: await examples.build('loss-summary') }),
        await yank(bearer),
        await send('PUT', '/packages/loss-summary/owners', { bearer, json: { owners: ['key:viewer'] } }),
      ];
      for (const answer of answers) {
        expect(answer.status).toBe(403);
        expect(answer.body).toEqual({ error: 'forbidden', message: 'role reader may not publish or yank packages (needs publisher or registry-admin)' });
      }
    }
  }, 60_000);

  it('qualifies the bare identities an older registry stored, once, at boot (docs/registry.md "Legacy identities")', async () => {
    const auth = { ...defaultConfig().registry.auth, mode: 'local' as const };
    let ciSecret = '';
    registry = await startTestRegistry({
      realAuth: true,
      registry: { auth },
      // What an older registry left: keys ci (in use) and old-ci (revoked), no issuer, bare names everywhere.
      seed: async (store) => {
        const keys = createRegistryKeyService({ store, clock: systemClock });
        ciSecret = (await keys.bootstrap({ name: 'ci', role: 'registry-admin' }))!.secret;
        await keys.revoke((await keys.create({ name: 'old-ci', role: 'publisher' })).id);
        await seedVersions(store, [{ name: 'loss-summary', version: '1.0.0', publishedBy: 'ci', yanked: true }]);
        const records = registryRecords(store);
        await records.packages.update('loss-summary', (c) => ({ ...c!.doc, owners: ['ci', 'old-ci', 'ghost', 'anonymous'] }));
        // seedVersions wrote the publish line (identity 'ci', bare); then the owner change.
        await records.history.append(() => ({ name: 'loss-summary', at: '2026-01-01T00:00:01.000Z', action: 'owners', version: null, identity: 'ghost', reason: null, security: false, owners: ['ci', 'ghost'] }));
      },
    });
    const pkg = (await send('GET', '/packages/loss-summary')).body;
    // ghost names no key (and no issuer is registered): granted to nobody.
    expect(pkg.owners).toEqual(['key:ci', 'key:old-ci', 'anonymous']);
    const version = (await send('GET', '/packages/loss-summary/1.0.0')).body;
    expect(version.published_by).toBe('key:ci');
    expect(version.yank.yanked_by).toBe('key:ci');
    expect((await send('GET', '/packages/loss-summary/history')).body.entries).toMatchObject([
      { action: 'publish', identity: 'key:ci' },
      { action: 'owners', identity: 'ghost', owners: ['key:ci'] },
    ]);
    // The key the old record named still owns the package.
    const published = await send('POST', '/packages', { bearer: ciSecret, archive: await examples.build('loss-summary', { version: '1.0.1' }) });
    expect(published.status, JSON.stringify(published.body)).toBe(201);

    // Once only: a second run (another registry process starting on the same store) changes nothing.
    const records = registryRecords(registry.deps.store);
    const before = await records.packages.get('loss-summary');
    const silent = { info: () => {}, warn: () => {} };
    expect(await migrateLegacyIdentities({ store: registry.deps.store, clock: systemClock, logger: silent })).toBeNull();
    expect(await records.packages.get('loss-summary')).toEqual(before);
  }, 60_000);
});
