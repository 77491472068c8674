import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Bus } from '@agent-platform/bus';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArchiveStore } from '../archive-store/archive-store.ts';
import { openFsArchiveStore } from '../archive-store/fs-archive-store.ts';
import { registryRecords } from '../registry-records.ts';
import { createSigner, sha256Tagged, type RegistrySigner } from '../signing/registry-signing.ts';
import { openExampleArchives, repack, type ExampleArchives } from '../testing/example-archives.ts';
import { createPackageRegistry, type PackageRegistry } from './package-registry.ts';
import type { RegistryActor } from './registry-context.ts';

// READMEs kept at publish (docs/registry.md "README"): apart from the version record, keyed by the
// archive, the winner's kept when two publishes of one version race.
const ALICE: RegistryActor = { identity: 'key:alice', role: 'publisher' };

let dir: string;
let examples: ExampleArchives;
let store: Store;
let bus: Bus;
let signer: RegistrySigner;
let archives: ArchiveStore;

function open(options: { store?: Store; archives?: ArchiveStore } = {}): PackageRegistry {
  return createPackageRegistry({ store: options.store ?? store, archives: options.archives ?? archives, signer, bus, clock: { now: () => new Date() }, logger: { warn: () => {} } });
}

const withReadme = (archive: Uint8Array, text: string) => repack(archive, (files) => files.set('README.md', new TextEncoder().encode(text)));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-registry-readme-'));
  examples = await openExampleArchives();
  store = await openEmbeddedStore({ path: join(dir, 'registry.db') });
  bus = createEmbeddedBus();
  signer = createSigner(generateKeyPairSync('ed25519').privateKey);
  archives = openFsArchiveStore(join(dir, 'archives'));
});
afterEach(async () => {
  await bus.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('package READMEs', () => {
  it('keeps the README apart from the version record; the version only says it has one', async () => {
    const registry = open();
    const published = await registry.publish(withReadme(await examples.build('loss-summary'), '# Loss summary'), ALICE);
    expect(published.has_readme).toBe(true);
    const record = await registryRecords(store).versions.get('loss-summary@1.0.0');
    expect(JSON.stringify(record?.doc)).not.toContain('# Loss summary');
    expect(await registry.readme('loss-summary', '1.0.0')).toEqual({ name: 'loss-summary', version: '1.0.0', text: '# Loss summary' });
    expect(await registry.readme('loss-summary', null)).toMatchObject({ version: '1.0.0' });
  });

  it('keeps only the winner’s README when two publishes of one version race', async () => {
    const base = await examples.build('loss-summary');
    const [first, second] = [withReadme(base, '# First'), withReadme(base, '# Second')];
    let arrived = 0;
    let release: () => void = () => {};
    const bothWrote = new Promise<void>((resolve) => (release = resolve));
    // Both archive writes wait for each other: both READMEs are stored before either record insert.
    const barrier: ArchiveStore = {
      ...archives,
      put: async (key, bytes) => {
        await archives.put(key, bytes);
        if (++arrived === 2) release();
        await bothWrote;
      },
    };
    const secondStore = await openEmbeddedStore({ path: join(dir, 'registry.db') });
    try {
      const results = await Promise.allSettled([
        open({ archives: barrier }).publish(first, ALICE),
        open({ store: secondStore, archives: barrier }).publish(second, ALICE),
      ]);
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(won).toHaveLength(1);
      const winner = won[0]!.archive_sha256 === sha256Tagged(first) ? '# First' : '# Second';
      expect((await open().readme('loss-summary', '1.0.0')).text).toBe(winner);
      expect(await registryRecords(store).readmes.count()).toBe(1);
      expect((await registryRecords(store).readmes.find())[0]?.doc.archive_sha256).toBe(won[0]!.archive_sha256);
    } finally {
      await secondStore.close();
    }
  });

  it('is NotFound (kind readme) for a version without one', async () => {
    const registry = open();
    expect((await registry.publish(await examples.build('loss-summary'), ALICE)).has_readme).toBe(false);
    await expect(registry.readme('loss-summary', '1.0.0')).rejects.toMatchObject({ category: 'NotFound', details: { kind: 'readme', id: 'loss-summary@1.0.0' } });
  });
});
