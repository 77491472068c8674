import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformError } from '../errors/platform-error.ts';
import { revocationCollections } from '../revocations/revocation-records.ts';
import { checkArchivedPackages } from './archived-packages.ts';
import { catalogCollections, type InstalledPackageRecord } from './catalog-records.ts';

// docs/backup.md "Packages in an archive": what a restore would bring back passes the install's
// checks first. Two real embedded stores: the live one, and the snapshot of an archive.
let dir: string;
let live: Store;
let archived: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-archived-packages-'));
  live = await openEmbeddedStore({ path: join(dir, 'live.db') });
  archived = await openEmbeddedStore({ path: join(dir, 'archived.db') });
});
afterEach(async () => {
  await live.close();
  await archived.close();
  await rm(dir, { recursive: true, force: true });
});

function record(name: string, source: 'path' | 'registry'): InstalledPackageRecord {
  const now = '2026-11-01T00:00:00.000Z';
  return {
    id: name,
    name,
    type: 'integration',
    version: '1.0.0',
    title: name,
    description: name,
    installed_at: now,
    updated_at: now,
    content_hash: `sha256:${'1'.repeat(64)}`,
    manifest: {} as InstalledPackageRecord['manifest'],
    payload: { file: 'mcp.json', data: { command: 'sh', args: [] } },
    entity_id: name,
    dependencies: [],
    source,
  };
}

async function refusal(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatformError);
  return error as PlatformError;
}

describe('checkArchivedPackages', () => {
  it('refuses an archive holding a package revoked here, own or foreign', async () => {
    await catalogCollections(archived).packages.upsert(record('claims-system', 'registry'));
    await expect(checkArchivedPackages(archived, { live }, false)).resolves.toBeUndefined();
    await revocationCollections(live).revocations.upsert({
      id: 'claims-system@1.0.0',
      name: 'claims-system',
      version: '1.0.0',
      reason: 'runs a planted command',
      revoked_at: '2026-11-02T00:00:00.000Z',
      seq: 1,
      key_id: 'sha256:feed',
      recorded_at: '2026-11-02T00:00:00.000Z',
      override: null,
    });
    for (const foreign of [false, true]) {
      const error = await refusal(checkArchivedPackages(archived, { live }, foreign));
      expect(error.category).toBe('CatalogError');
      expect(error.message).toMatch(/claims-system/);
      expect(error.message).toMatch(/revoked/);
    }
  });

  it('refuses a foreign archive holding a package installed from a directory (no registry signature)', async () => {
    await catalogCollections(archived).packages.upsert(record('local-crm', 'path'));
    await expect(checkArchivedPackages(archived, { live }, false)).resolves.toBeUndefined();
    const error = await refusal(checkArchivedPackages(archived, { live }, true));
    expect(error.category).toBe('CatalogError');
    expect(error.message).toMatch(/local-crm .*no registry signature/);
  });

  it('refuses a foreign archive whose registry packages cannot be verified (no registry configured)', async () => {
    await catalogCollections(archived).packages.upsert(record('claims-system', 'registry'));
    const error = await refusal(checkArchivedPackages(archived, { live }, true));
    expect(error.message).toMatch(/needs a registry/);
  });

  it('refuses a foreign archive with an integration no package accounts for', async () => {
    await catalogCollections(archived).integrations.upsert({
      id: 'ghost',
      name: 'ghost',
      version: '1.0.0',
      description: '',
      transport: 'mcp',
      implements: {},
      payload: { command: 'sh', args: ['-c', 'id'] },
      installed_at: '2026-11-01T00:00:00.000Z',
      updated_at: '2026-11-01T00:00:00.000Z',
    });
    const error = await refusal(checkArchivedPackages(archived, { live }, true));
    expect(error.message).toMatch(/integration ghost/);
  });
});
