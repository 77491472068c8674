import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIssuerStore } from '../auth/issuer-store.ts';
import { createRegistryKeyService } from '../auth/registry-keys.ts';
import { QUALIFIED_IDENTITIES, registryRecords, type RegistryCollectionRecord } from '../registry-records.ts';
import { seedVersions } from '../testing/seed-registry.ts';
import { legacyIdentityRule, migrateLegacyIdentities } from './identity-migration.ts';

// The once-only migration of bare identities over a real embedded store (docs/registry.md
// "Legacy identities"): the rule, a registry with one issuer, and a run cut short by a crash.
const ISSUER = 'https://login.example.com/realms/acme';

describe('legacyIdentityRule', () => {
  it('maps a key name with no issuer, a non-key with one issuer, and nothing else', () => {
    const local = legacyIdentityRule({ key_names: ['ci'], issuers: [] });
    expect(['ci', 'alice', 'anonymous'].map(local)).toEqual(['key:ci', null, 'anonymous']);
    const oneIssuer = legacyIdentityRule({ key_names: ['ci'], issuers: [ISSUER] });
    expect(['ci', 'alice', 'anonymous'].map(oneIssuer)).toEqual([null, `${ISSUER}#alice`, 'anonymous']);
    const twoIssuers = legacyIdentityRule({ key_names: [], issuers: [ISSUER, 'https://idp.example.org'] });
    expect(twoIssuers('alice')).toBeNull();
  });
});

describe('migrateLegacyIdentities', () => {
  let dir: string;
  let store: Store;
  const warnings: string[] = [];
  const logger = { info: () => {}, warn: (_o: Record<string, unknown>, message: string) => void warnings.push(message) };
  const migrate = () => migrateLegacyIdentities({ store, clock: systemClock, logger });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-identity-migration-'));
    store = await openEmbeddedStore({ path: join(dir, 'registry.db') });
    warnings.length = 0;
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const collection = (owners: string[]): RegistryCollectionRecord => ({
    id: 'starter-kit',
    name: 'starter-kit',
    display_name: 'Starter kit',
    description: 'A collection.',
    version: '1.0.0',
    license: 'Apache-2.0',
    featured: false,
    tags: [],
    packages: [],
    owners,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });

  it('with one issuer: subjects become <issuer>#<sub>; a name that is also a key is granted to nobody and reported', async () => {
    await createRegistryKeyService({ store, clock: systemClock }).create({ name: 'ci', role: 'publisher' });
    await createIssuerStore({ store, clock: systemClock }).create({
      issuer: ISSUER,
      audience: 'registry',
      jwks_uri: '',
      role_claim: 'roles',
      allowed_algorithms: ['RS256'],
      role_mapping: { publishers: 'publisher' },
      jwks_cache_ttl_secs: 300,
    });
    await seedVersions(store, [{ name: 'fnol-triage', version: '1.0.0', publishedBy: 'alice' }]);
    const records = registryRecords(store);
    await records.packages.update('fnol-triage', (c) => ({ ...c!.doc, owners: ['alice', 'ci'] }));
    await records.collections.insert(collection(['ci', 'alice']));

    const report = await migrate();
    expect(report).toMatchObject({ packages: 1, versions: 1, collections: 1 });
    expect(report?.unresolved).toEqual([
      { kind: 'package', name: 'fnol-triage', identity: 'ci' },
      { kind: 'collection', name: 'starter-kit', identity: 'ci' },
    ]);
    expect((await records.packages.get('fnol-triage'))?.doc).toMatchObject({ owners: [`${ISSUER}#alice`], identities: QUALIFIED_IDENTITIES });
    expect((await records.versions.get('fnol-triage@1.0.0'))?.doc.published_by).toBe(`${ISSUER}#alice`);
    expect((await records.collections.get('starter-kit'))?.doc.owners).toEqual([`${ISSUER}#alice`]);
    expect(warnings.join('\n')).toContain("legacy owner 'ci' of package 'fnol-triage' could not be qualified and was removed");
  });

  it('finishes a run cut short after some records: those already rewritten are not rewritten again', async () => {
    await createRegistryKeyService({ store, clock: systemClock }).create({ name: 'ci', role: 'publisher' });
    await seedVersions(store, [
      { name: 'loss-summary', version: '1.0.0', publishedBy: 'ci' },
      { name: 'fnol-triage', version: '1.0.0', publishedBy: 'ci' },
    ]);
    const records = registryRecords(store);
    // The crash: the migration's inputs were stored and one package rewritten, then the process died.
    await records.migrations.insert({ id: 'qualified-identities', started_at: '2026-01-01T00:00:00.000Z', finished_at: null, key_names: ['ci'], issuers: [] });
    await records.packages.update('loss-summary', (c) => ({ ...c!.doc, owners: ['key:ci'], identities: QUALIFIED_IDENTITIES }));
    // A key made after the crash does not change the rule the first run decided by.
    await createRegistryKeyService({ store, clock: systemClock }).create({ name: 'key:ci', role: 'publisher' });

    const report = await migrate();
    expect(report).toMatchObject({ packages: 1, versions: 2, unresolved: [] });
    expect((await records.packages.get('loss-summary'))?.doc.owners).toEqual(['key:ci']);
    expect((await records.packages.get('fnol-triage'))?.doc.owners).toEqual(['key:ci']);
    expect((await records.migrations.get('qualified-identities'))?.doc.finished_at).not.toBeNull();
    expect(await migrate()).toBeNull();
  });

  it('on an empty store only marks itself done, and records written since are never touched', async () => {
    expect(await migrate()).toMatchObject({ packages: 0, versions: 0, collections: 0 });
    await seedVersions(store, [{ name: 'loss-summary', version: '1.0.0', publishedBy: 'someone' }]);
    expect(await migrate()).toBeNull();
    expect((await registryRecords(store).packages.get('loss-summary'))?.doc.owners).toEqual(['someone']);
  });
});
