import { startOidcProvider, tokenForger, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { openExampleArchives } from '@agent-platform/registry-core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { callRegistry, startRegistryProcesses, type RegistryProcesses } from '../support/registry-processes.ts';

// Trusted publishing across registry processes (docs/registry-auth.md "Trusted publishing"): two
// `apps/registry` processes over one data dir (auth mode local), a real OpenID provider on loopback
// standing in for the CI issuer. The owner configures the package on one process, the CI job
// exchanges its token on the other and publishes on the first; the first is SIGKILLed between the
// exchange and the publish and started again: the trusted publishers and the minted token live in
// the store, not in a process. An owner's change on one process stops the token on the other.

const AUDIENCE = 'https://registry.e2e.example';
const REPO = { repository: 'acme/loss-summary', workflow: 'release.yml' };
let cluster: RegistryProcesses | undefined;
let provider: OidcProviderHarness | undefined;

afterAll(async () => {
  await cluster?.close();
  await provider?.close();
});


const send = callRegistry;

describe('trusted publishing across registry processes', () => {
  it('configured on one process, exchanged on the other, published on the first after it was SIGKILLed and restarted', async () => {
    cluster = await startRegistryProcesses('ap-registry-trusted-publishing-', { auth: { mode: 'local' }, config: { network: { allow_private_targets: true } } });
    provider = await startOidcProvider({ audience: AUDIENCE, clients: {} });
    const forger = tokenForger(provider, { audience: AUDIENCE, roles: [] });
    const ciToken = (claims: Record<string, string> = {}) =>
      forger.forge({ sub: 'repo:acme/loss-summary:ref:refs/heads/main', ...REPO, sha: 'c0ffee', ref: 'refs/heads/main', realm_access: undefined, ...claims }, { typ: 'JWT' });
    const examples = await openExampleArchives();
    const [first, second] = await Promise.all([cluster.start('first'), cluster.start('second')]);

    const admin: string = (await send(first.url, 'POST', '/keys', undefined, { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
    const alice: string = (await send(first.url, 'POST', '/keys', admin, { json: { name: 'alice', role: 'publisher' } })).body.secret;
    const issuer = await send(first.url, 'POST', '/admin/issuers', admin, {
      json: { issuer: provider.issuer, audience: AUDIENCE, jwks_uri: '', role_claim: 'registry_role', allowed_algorithms: ['RS256'], role_mapping: { never: 'reader' }, jwks_cache_ttl_secs: 300 },
    });
    expect(issuer.status, JSON.stringify(issuer.body)).toBe(201);
    expect((await send(first.url, 'POST', '/packages', alice, { archive: await examples.build('loss-summary') })).status).toBe(201);
    const trusted = await send(first.url, 'PUT', '/packages/loss-summary/trusted-publishers', alice, { json: { publishers: [{ issuer: provider.issuer, claims: REPO }] } });
    expect(trusted.status, JSON.stringify(trusted.body)).toBe(200);

    // The CI job exchanges on the second process: it reads what the first wrote.
    const minted = await send(second.url, 'POST', '/trusted-publishing/exchange', undefined, { json: { token: await ciToken() } });
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    expect(minted.body.packages).toEqual(['loss-summary']);
    const token: string = minted.body.token;

    // Crash point: the first process dies after the exchange and before the publish.
    await first.app.kill();
    const again = await cluster.start('first-again');
    const published = await send(again.url, 'POST', '/packages', token, { archive: await examples.build('loss-summary', { version: '1.1.0' }) });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    const identity = `${provider.issuer}#repo:acme/loss-summary:ref:refs/heads/main`;
    const provenance = { kind: 'trusted-publishing', identity, issuer: provider.issuer, claims: { ...REPO, sha: 'c0ffee', ref: 'refs/heads/main' } };
    expect(published.body).toMatchObject({ published_by: identity, provenance });
    // Shown by the other process too, and only on that version.
    expect((await send(second.url, 'GET', '/packages/loss-summary/1.1.0')).body.provenance).toEqual(provenance);
    expect((await send(second.url, 'GET', '/packages/loss-summary/1.0.0')).body.provenance).toBeNull();

    // The owner narrows the trusted publishers on the second process: the restarted first refuses
    // the token on its next request, and a new exchange with the old claims is refused on either.
    await send(second.url, 'PUT', '/packages/loss-summary/trusted-publishers', alice, { json: { publishers: [{ issuer: provider.issuer, claims: { ...REPO, ref: 'refs/tags/v2' } }] } });
    const refused = await send(again.url, 'POST', '/packages', token, { archive: await examples.build('loss-summary', { version: '1.2.0' }) });
    expect(refused.status).toBe(403);
    expect((await send(again.url, 'POST', '/trusted-publishing/exchange', undefined, { json: { token: await ciToken() } })).status).toBe(403);
    const tagged = await send(again.url, 'POST', '/trusted-publishing/exchange', undefined, { json: { token: await ciToken({ ref: 'refs/tags/v2' }) } });
    expect(tagged.status).toBe(201);
    expect((await send(second.url, 'POST', '/packages', tagged.body.token, { archive: await examples.build('loss-summary', { version: '1.2.0' }) })).status).toBe(201);
    expect((await send(second.url, 'GET', '/packages/loss-summary')).body).toMatchObject({ versions: ['1.2.0', '1.1.0', '1.0.0'], owners: ['key:alice'] });
    await examples.close();
  }, 180_000);
});
