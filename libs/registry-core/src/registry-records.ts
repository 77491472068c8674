import type { RegistryCollection, RegistryHistoryEntry, RegistryVersion, PackageType, Revocation } from '@agent-platform/contracts';
import type { AppendLog, Collection, Store } from '@agent-platform/store';

/**
 * How the registry keeps its metadata in the platform store (docs/registry.md "Storage"); the
 * archive bytes live in an ArchiveStore. One file names every registry collection, so the
 * publish path, the search index and the collections agree on the shapes.
 */

/**
 * Set on every record written with qualified identities (`key:<name>`, `<issuer>#<sub>`:
 * auth/registry-identity.ts). A record without it was written with bare names before identities
 * were qualified: the boot migration (packages/identity-migration.ts) rewrites it once, and
 * history lines, which are never edited, are read through the same rule.
 */
export const QUALIFIED_IDENTITIES = 'qualified';
type IdentityMark = { identities?: typeof QUALIFIED_IDENTITIES };

/** One package name: who owns it. `id` is the name. */
export interface RegistryPackageRecord extends IdentityMark {
  id: string;
  name: string;
  type: PackageType;
  /** Identities allowed to publish and yank; the first publisher first. Empty: registry admins only. */
  owners: string[];
  created_at: string;
  updated_at: string;
  /** Dist-tags owners set (packages/package-dist-tags.ts), tag -> version; `latest` is never stored (computed). */
  dist_tags?: Record<string, string>;
  /** Set by `PUT /packages/{name}/deprecation` (packages/package-deprecation.ts); absent or null: not deprecated. */
  deprecated?: { message: string; deprecated_at: string; deprecated_by: string } | null;
}

/** One published version. `id` is `<name>@<version>`; immutable but for `yanked` and `yank`. */
export interface RegistryVersionRecord extends RegistryVersion, IdentityMark {
  id: string;
  /** ArchiveStore key of its archive (archiveKey(name, version, archive_sha256)). */
  archive_key: string;
}

/** One line of a package's history (an append log: `seq` orders it across the registry). */
export interface RegistryHistoryRecord extends RegistryHistoryEntry, IdentityMark {
  name: string;
}

/**
 * The once-only migration of bare identities (`id` `qualified-identities`): the key names and
 * issuers it decided by, kept so that a re-run after a crash, a second registry process and the
 * history reads all apply the same rule.
 */
export interface IdentityMigrationRecord {
  id: string;
  started_at: string;
  finished_at: string | null;
  key_names: string[];
  issuers: string[];
}

/** One security yank on the revocation feed; the log's `seq` is the feed's `seq`. */
export type RevocationRecord = Omit<Revocation, 'seq'>;

/** One collection (COLLECTION.toml, spec §Package manifests). `id` is the collection name; the wire view is every other field. */
export interface RegistryCollectionRecord extends RegistryCollection, IdentityMark {
  id: string;
}

export const REGISTRY_COLLECTIONS = {
  packages: 'registry_packages',
  versions: 'registry_versions',
  history: 'registry_history',
  collections: 'registry_collections',
  revocations: 'registry_revocations',
  keys: 'registry_keys',
  /** Publishers' own tokens (auth/registry-tokens.ts): the key records, and what each may do. */
  tokens: 'registry_tokens',
  tokenGrants: 'registry_token_grants',
  issuers: 'registry_issuers',
  migrations: 'registry_migrations',
} as const;

/** The store counter bumped by every publish, yank, un-yank and owner change: search indexes rebuild when it moves. */
export const REGISTRY_GENERATION_COUNTER = 'registry:generation';

export function versionId(name: string, version: string): string {
  return `${name}@${version}`;
}

export interface RegistryRecords {
  packages: Collection<RegistryPackageRecord>;
  versions: Collection<RegistryVersionRecord>;
  /** Publishes, yanks, un-yanks and owner changes of every package, oldest first by `seq`. */
  history: AppendLog<RegistryHistoryRecord>;
  /**
   * Security yanks: an append log, so `seq` grows by one per revocation with no gap and no fork
   * across every process sharing the store (the feed's ordering promise).
   */
  revocations: AppendLog<RevocationRecord>;
  collections: Collection<RegistryCollectionRecord>;
  migrations: Collection<IdentityMigrationRecord>;
}

export function registryRecords(store: Store): RegistryRecords {
  return {
    packages: store.collection<RegistryPackageRecord>(REGISTRY_COLLECTIONS.packages),
    versions: store.collection<RegistryVersionRecord>(REGISTRY_COLLECTIONS.versions, { indexes: [{ field: 'name' }] }),
    history: store.log<RegistryHistoryRecord>(REGISTRY_COLLECTIONS.history, { indexes: ['name'] }),
    revocations: store.log<RevocationRecord>(REGISTRY_COLLECTIONS.revocations, { indexes: ['name'] }),
    collections: store.collection<RegistryCollectionRecord>(REGISTRY_COLLECTIONS.collections),
    migrations: store.collection<IdentityMigrationRecord>(REGISTRY_COLLECTIONS.migrations),
  };
}
