import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '@agent-platform/domain';
import { startOidcProvider, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { createIssuerStore, createRegistryKeyService } from '@agent-platform/registry-core';
import { openExampleArchives, registryCall, seedVersions, type ExampleArchives, type RegistryAnswer, type RegistryCallOptions } from '@agent-platform/registry-core/testing';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { freePort } from '@agent-platform/testkit';
import { decodeJwt } from 'jose';
import { stringify } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { startApp, type AppProcess } from '../support/fleet.ts';

// Registry identities through a real registry process (`apps/registry`, docs/registry-auth.md
// "Identities", docs/registry.md "Legacy identities"). Its store first holds what an older
// registry left: loss-summary owned by the bare name `alice`, issuer A registered, no key named
// alice. The process qualifies that owner at boot as A's `alice`. Then issuer B, whose client is
// also `alice`, is registered, and a local key `alice` is made: both are other callers than A's
// alice, refused 403 on publish, security yank (which would reach every platform through the
// signed revocation feed) and owner change, while A's alice may do all three. A reader's role
// refusal is the spec's flat 403.
const AUDIENCE = 'https://registry.e2e.example';
const CLIENTS = { alice: { roles: ['publishers'] } };

let dir: string | undefined;
let registry: AppProcess | undefined;
const providers: OidcProviderHarness[] = [];
let examples: ExampleArchives | undefined;

afterAll(async () => {
  await registry?.kill();
  for (const provider of providers) await provider.close();
  await examples?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('registry identities in a registry process', () => {
  it('qualifies a legacy owner at boot; a second issuer with the same sub and a key named like it are refused 403', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-registry-identities-'));
    const data = join(dir, 'data');
    await mkdir(data);
    const [providerA, providerB] = await Promise.all([
      startOidcProvider({ audience: AUDIENCE, clients: CLIENTS }),
      startOidcProvider({ audience: AUDIENCE, clients: CLIENTS }),
    ]);
    providers.push(providerA, providerB);
    examples = await openExampleArchives();
    const issuerBody = (issuer: string) => ({
      issuer,
      audience: AUDIENCE,
      jwks_uri: '',
      role_claim: 'realm_access.roles',
      allowed_algorithms: ['RS256'],
      role_mapping: { publishers: 'publisher' as const },
      jwks_cache_ttl_secs: 300,
    });

    // What an older registry left in its store.
    const store = await openEmbeddedStore({ path: join(data, 'platform.db') });
    const admin = (await createRegistryKeyService({ store, clock: systemClock }).bootstrap({ name: 'admin', role: 'registry-admin' }))!.secret;
    await createIssuerStore({ store, clock: systemClock }).create(issuerBody(providerA.issuer));
    await seedVersions(store, [{ name: 'loss-summary', version: '1.0.0', publishedBy: 'alice' }]);
    await store.close();

    const port = await freePort();
    const config = join(dir, 'registry.toml');
    await writeFile(
      config,
      stringify({
        storage: { data_dir: data },
        network: { allow_private_targets: true },
        registry: { listen: `127.0.0.1:${port}`, auth: { mode: 'oidc', allow_local_keys: true } },
      }),
    );
    registry = startApp('registry', config);
    const url = await registry.ready();
    const send = (method: string, path: string, bearer?: string, body: RegistryCallOptions = {}): Promise<RegistryAnswer> =>
      registryCall(url, method, path, { ...body, ...(bearer === undefined ? {} : { bearer }) });
    const aliceA = `${providerA.issuer}#alice`;
    expect((await send('GET', '/packages/loss-summary')).body.owners).toEqual([aliceA]);

    expect((await send('POST', '/admin/issuers', admin, { json: issuerBody(providerB.issuer) })).status).toBe(201);
    const aliceKey: string = (await send('POST', '/keys', admin, { json: { name: 'alice', role: 'publisher' } })).body.secret;
    const viewer: string = (await send('POST', '/keys', admin, { json: { name: 'viewer', role: 'reader' } })).body.secret;
    const [tokenA, tokenB] = await Promise.all([providerA.accessToken('alice'), providerB.accessToken('alice')]);
    expect(decodeJwt(tokenB).sub).toBe(decodeJwt(tokenA).sub);

    const next = await examples.build('loss-summary', { version: '1.0.1' });
    const securityYank = { json: { reason: 'exfiltrates claims', security: true } };
    for (const [who, bearer] of [
      ['issuer B, same sub', tokenB],
      ['key alice', aliceKey],
    ] as const) {
      const publish = await send('POST', '/packages', bearer, { archive: next });
      expect(publish.status, `${who}: ${JSON.stringify(publish.body)}`).toBe(403);
      expect(publish.body.error).toMatchObject({ category: 'PermissionDenied', message: expect.stringContaining(`belongs to ${aliceA}`) });
      expect((await send('POST', '/packages/loss-summary/1.0.0/yank', bearer, securityYank)).status, who).toBe(403);
      expect((await send('PUT', '/packages/loss-summary/owners', bearer, { json: { owners: [`${providerB.issuer}#alice`] } })).status, who).toBe(403);
    }
    expect(decodeJwt((await send('GET', '/revocations?since=0')).body.feed)).toMatchObject({ latest_seq: 0 });
    expect((await send('GET', '/packages/loss-summary')).body).toMatchObject({ owners: [aliceA], versions: ['1.0.0'] });

    // A reader is refused by role: the spec's flat 403 on each of the three, never a 500.
    for (const answer of [
      await send('POST', '/packages', viewer, { archive: next }),
      await send('POST', '/packages/loss-summary/1.0.0/yank', viewer, securityYank),
      await send('PUT', '/packages/loss-summary/owners', viewer, { json: { owners: ['key:viewer'] } }),
    ]) {
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ error: 'forbidden' });
    }

    // The rightful owner publishes, security-yanks (onto the signed feed) and shares ownership with her key.
    expect((await send('POST', '/packages', tokenA, { archive: next })).status).toBe(201);
    expect((await send('POST', '/packages/loss-summary/1.0.0/yank', tokenA, securityYank)).status).toBe(200);
    expect(decodeJwt((await send('GET', '/revocations?since=0')).body.feed)).toMatchObject({ latest_seq: 1 });
    const owners = await send('PUT', '/packages/loss-summary/owners', tokenA, { json: { owners: [aliceA, 'key:alice'] } });
    expect(owners.status, JSON.stringify(owners.body)).toBe(200);
    // Two-sided: the key is invited, and owns the package once it accepts.
    expect(owners.body).toMatchObject({ owners: [aliceA], pending_owners: [{ owner: 'key:alice' }] });
    expect((await send('POST', '/packages/loss-summary/owners/accept', aliceKey, { json: {} })).body.owners).toEqual([aliceA, 'key:alice']);
    expect(registry.output()).not.toContain(admin);
    expect(registry.output()).not.toContain(aliceKey);
  }, 180_000);
});
