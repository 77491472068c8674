import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Bus } from '@agent-platform/bus';
import { systemClock } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openFsArchiveStore } from '../archive-store/fs-archive-store.ts';
import { createIssuerStore } from '../auth/issuer-store.ts';
import { createRegistryKeyService } from '../auth/registry-keys.ts';
import { createPackageRegistry, type PackageRegistry } from '../packages/package-registry.ts';
import type { PackageRegistryDeps, RegistryActor } from '../packages/registry-context.ts';
import { registryRecords, type RegistryPackageRecord } from '../registry-records.ts';
import { createSigner } from '../signing/registry-signing.ts';
import { openExampleArchives } from '../testing/example-archives.ts';
import { createTrustedPublisherService, type TrustedPublisherService } from './trusted-publisher-service.ts';
import { trustedPublisherRecords } from './trusted-publishers.ts';

// The owner side of trusted publishing over the real embedded store: a change of a package's
// trusted publishers is one write with its ownership check, so an owner removed by a concurrent
// request cannot change them after the removal was answered.
const ALICE: RegistryActor = { identity: 'key:alice', role: 'publisher' };
const BOB: RegistryActor = { identity: 'key:bob', role: 'publisher' };
const ADMIN: RegistryActor = { identity: 'key:root', role: 'registry-admin' };
const ISSUER = 'https://ci.example.com';

/** `target` with some of its methods replaced (the others still bound to it). */
function overriding<T extends object>(target: T, methods: Record<string, unknown>): T {
  return new Proxy(target, {
    get(object, property) {
      if (typeof property === 'string' && property in methods) return methods[property];
      const value: unknown = Reflect.get(object, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

describe('trusted publishers', () => {
  let dir: string;
  let store: Store;
  let bus: Bus;
  let registry: PackageRegistry;
  let trusted: TrustedPublisherService;
  let deps: () => PackageRegistryDeps;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-trusted-publishers-'));
    store = await openEmbeddedStore({ path: join(dir, 'registry.db') });
    bus = createEmbeddedBus();
    const opened = {
      store,
      archives: openFsArchiveStore(join(dir, 'archives')),
      signer: createSigner(generateKeyPairSync('ed25519').privateKey),
      bus,
      clock: systemClock,
      logger: { warn: () => undefined },
    };
    deps = () => opened;
    registry = createPackageRegistry(opened);
    trusted = createTrustedPublisherService(opened);
    const keys = createRegistryKeyService({ store, clock: systemClock });
    for (const name of ['alice', 'bob']) await keys.create({ name, role: 'publisher' });
    await createIssuerStore({ store, clock: systemClock }).create({
      issuer: ISSUER,
      audience: 'https://registry.example',
      jwks_uri: '',
      role_claim: 'registry_role',
      allowed_algorithms: ['RS256'],
      role_mapping: { never: 'reader' },
      jwks_cache_ttl_secs: 300,
    });
    const examples = await openExampleArchives();
    await registry.publish(await examples.build('loss-summary'), ALICE);
    await examples.close();
  });
  afterEach(async () => {
    await bus.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const list = (workflow: string) => [{ issuer: ISSUER, claims: { repository: 'acme/loss-summary', workflow } }];
  const current = async () => (await trusted.get('loss-summary', ADMIN)).publishers.map((p) => p.claims['workflow'] ?? '');

  it('keeps the list on the package record, beside the owners its change is checked against, and the index in step', async () => {
    await trusted.replace('loss-summary', list('release.yml'), ALICE);
    expect((await registryRecords(store).packages.get('loss-summary'))?.doc.trusted_publishers).toEqual(list('release.yml'));
    expect((await trustedPublisherRecords(store).get('loss-summary'))?.doc.publishers).toEqual(list('release.yml'));
    expect(await current()).toEqual(['release.yml']);
  });

  it('reads a list set before lists were kept on the package record from the index', async () => {
    await trustedPublisherRecords(store).upsert({ id: 'loss-summary', publishers: list('legacy.yml'), updated_at: new Date().toISOString(), updated_by: 'key:alice' });
    expect(await current()).toEqual(['legacy.yml']);
    await trusted.replace('loss-summary', list('release.yml'), ALICE);
    expect(await current()).toEqual(['release.yml']);
  });

  it('never applies a change of an owner after its removal: the removal lands right after the ownership check', async () => {
    await registry.setOwners('loss-summary', ['key:alice', 'key:bob'], ADMIN);
    await trusted.replace('loss-summary', list('before.yml'), ALICE);
    // The trust change's store: right after its write of the package record (the ownership check),
    // bob removes alice, and what the list is at that instant is noted.
    const seen: string[][] = [];
    const hooked = overriding(store, {
      collection: (name: string, options?: object) => {
        const collection = store.collection<RegistryPackageRecord>(name, options);
        if (name !== 'registry_packages') return collection;
        return overriding(collection, {
          update: async (id: string, change: Parameters<typeof collection.update>[1]) => {
            const result = await collection.update(id, change);
            if (seen.length === 0) {
              await registry.setOwners('loss-summary', ['key:bob'], BOB);
              seen.push(await current());
            }
            return result;
          },
        });
      },
    });
    const racing = createTrustedPublisherService({ ...deps(), store: hooked });
    await racing.replace('loss-summary', list('after.yml'), ALICE);
    // When bob's removal was answered, alice's change was already the list: nothing of hers came after it.
    expect(seen).toEqual([['after.yml']]);
    expect(await current()).toEqual(['after.yml']);
    // And now she is refused.
    expect(await trusted.replace('loss-summary', list('late.yml'), ALICE).catch((e: { category: string }) => e.category)).toBe('PermissionDenied');
  });
});
