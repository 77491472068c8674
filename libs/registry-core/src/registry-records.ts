import type { RegistryCollection, RegistryVersion, PackageType } from '@agent-platform/contracts';
import type { Collection, Store } from '@agent-platform/store';

/**
 * How the registry keeps its metadata in the platform store (docs/registry.md "Storage"); the
 * archive bytes live in an ArchiveStore. One file names every registry collection, so the
 * publish path, the search index and the collections agree on the shapes.
 */

/** One package name: who owns it. `id` is the name. */
export interface RegistryPackageRecord {
  id: string;
  name: string;
  type: PackageType;
  /** Identities allowed to publish and yank; the first publisher first. */
  owners: string[];
  created_at: string;
  updated_at: string;
}

/** One published version. `id` is `<name>@<version>`; immutable but for `yanked` and `yank`. */
export interface RegistryVersionRecord extends RegistryVersion {
  id: string;
  /** ArchiveStore key of its archive (archiveKey(name, version)). */
  archive_key: string;
}

/** One collection (COLLECTION.toml, spec §Package manifests). `id` is the collection name; the wire view is every other field. */
export interface RegistryCollectionRecord extends RegistryCollection {
  id: string;
}

export const REGISTRY_COLLECTIONS = {
  packages: 'registry_packages',
  versions: 'registry_versions',
  history: 'registry_history',
  collections: 'registry_collections',
  revocations: 'registry_revocations',
  keys: 'registry_keys',
  issuers: 'registry_issuers',
} as const;

/** The store counter bumped by every publish, yank, un-yank and owner change: search indexes rebuild when it moves. */
export const REGISTRY_GENERATION_COUNTER = 'registry:generation';

export function versionId(name: string, version: string): string {
  return `${name}@${version}`;
}

export interface RegistryRecords {
  packages: Collection<RegistryPackageRecord>;
  versions: Collection<RegistryVersionRecord>;
  collections: Collection<RegistryCollectionRecord>;
}

export function registryRecords(store: Store): RegistryRecords {
  return {
    packages: store.collection<RegistryPackageRecord>(REGISTRY_COLLECTIONS.packages),
    versions: store.collection<RegistryVersionRecord>(REGISTRY_COLLECTIONS.versions, { indexes: [{ field: 'name' }] }),
    collections: store.collection<RegistryCollectionRecord>(REGISTRY_COLLECTIONS.collections),
  };
}
