import { RegistryVersion, type PackageType, type RegistryYank } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { Value } from 'typebox/value';
import { archiveKey } from '../archive-store/archive-store.ts';
import {
  REGISTRY_GENERATION_COUNTER,
  registryRecords,
  versionId,
  type RegistryHistoryRecord,
  type RegistryVersionRecord,
} from '../registry-records.ts';

/** One version to seed; everything but name and version has a plain default. */
export interface SeedVersion {
  name: string;
  version: string;
  type?: PackageType;
  title?: string;
  description?: string;
  keywords?: string[];
  categories?: string[];
  regions?: string[];
  dependencies?: Record<string, string>;
  /** Seed it yanked (a plain, not a security, yank). */
  yanked?: boolean;
  /** Owners of the package when this seed creates it (default: `published_by`). */
  publishedBy?: string;
}

const AT = '2026-01-01T00:00:00.000Z';
const HASH = `sha256:${'0'.repeat(64)}`;

/** The RegistryVersion record a publish would have stored for `seed` (the signature is a placeholder). */
export function seedRecord(seed: SeedVersion): RegistryVersionRecord {
  const publishedBy = seed.publishedBy ?? 'seed-publisher';
  const record: RegistryVersionRecord = {
    id: versionId(seed.name, seed.version),
    name: seed.name,
    version: seed.version,
    type: seed.type ?? 'skill',
    title: seed.title ?? seed.name,
    description: seed.description ?? `The ${seed.name} package.`,
    license: 'Apache-2.0',
    min_platform_version: '0.1.0',
    keywords: seed.keywords ?? [],
    categories: seed.categories ?? [],
    regions: seed.regions ?? [],
    dependencies: seed.dependencies ?? {},
    content_hash: HASH,
    archive_sha256: HASH,
    size_bytes: 1024,
    signature: 'seeded',
    key_id: 'sha256:seeded',
    published_at: AT,
    published_by: publishedBy,
    yanked: seed.yanked === true,
    yank: seed.yanked === true ? { reason: 'seeded yank', security: false, yanked_at: AT, yanked_by: publishedBy } : null,
    archive_key: archiveKey(seed.name, seed.version),
  };
  const { id: _id, archive_key: _key, ...wire } = record;
  if (!Value.Check(RegistryVersion, wire)) throw new Error(`seed ${record.id} is not a RegistryVersion: ${JSON.stringify([...Value.Errors(RegistryVersion, wire)][0])}`);
  return record;
}

/**
 * Writes published versions straight into the registry's store collections, as the publish
 * service would (a package record per name, a version record per name@version, a `publish`
 * history line each), then bumps `REGISTRY_GENERATION_COUNTER` once. For tests and the search
 * benchmark, which need a populated registry without archives.
 */
export async function seedVersions(store: Store, seeds: readonly SeedVersion[]): Promise<void> {
  const records = registryRecords(store);
  for (const seed of seeds) {
    const record = seedRecord(seed);
    await records.versions.upsert(record);
    await records.packages.update(seed.name, (current) =>
      current !== null
        ? { ...current.doc, updated_at: AT }
        : { id: seed.name, name: seed.name, type: record.type, owners: [record.published_by], created_at: AT, updated_at: AT },
    );
    await records.history.append(() => historyLine(seed.name, 'publish', seed.version, record.published_by));
  }
  await store.counters.add(REGISTRY_GENERATION_COUNTER, 1);
}

/**
 * The line the registry's services append to its history for a change (registry-context.ts
 * `afterChange`); unmarked, like the seeded records, so a bare seeded name reads as a legacy one.
 */
function historyLine(name: string, action: 'publish' | 'yank' | 'unyank', version: string, identity: string): RegistryHistoryRecord {
  return { name, at: AT, action, version, identity, reason: action === 'publish' ? null : 'seeded yank', security: false };
}

/** Yanks (or with `yanked: false` un-yanks) one seeded version and bumps the generation counter. */
export async function seedYank(store: Store, name: string, version: string, yanked = true): Promise<void> {
  const yank: RegistryYank | null = yanked ? { reason: 'seeded yank', security: false, yanked_at: AT, yanked_by: 'seed-publisher' } : null;
  const updated = await registryRecords(store).versions.update(versionId(name, version), (current) =>
    current === null ? null : { ...current.doc, yanked, yank },
  );
  if (updated === null) throw new Error(`no seeded version ${name}@${version}`);
  await registryRecords(store).history.append(() => historyLine(name, yanked ? 'yank' : 'unyank', version, 'seed-publisher'));
  await store.counters.add(REGISTRY_GENERATION_COUNTER, 1);
}
