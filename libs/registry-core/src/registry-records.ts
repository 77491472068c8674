import type { RegistryCollection, RegistryHistoryEntry, RegistryPendingOwner, RegistryVersion, PackageType, Revocation, TrustedPublisher } from '@agent-platform/contracts';
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
  /** Identities (and `team:<name>` teams) allowed to publish and yank; the first publisher first. Empty: registry admins only. */
  owners: string[];
  /** Owners invited by an owner, not owners until they accept (packages/package-owners.ts); absent: none. */
  pending_owners?: RegistryPendingOwner[];
  created_at: string;
  updated_at: string;
  /** Dist-tags owners set (packages/package-dist-tags.ts), tag -> version; `latest` is never stored (computed). */
  dist_tags?: Record<string, string>;
  /**
   * The CI identities allowed to publish it (trusted-publishing/trusted-publishers.ts), kept here so
   * that an owner's change of them is one atomic write with its ownership check. Absent: set before
   * they were kept here, read from `registry_trusted_publishers` (which stays the exchange's index).
   */
  trusted_publishers?: TrustedPublisher[];
  /** Set by `PUT /packages/{name}/deprecation` (packages/package-deprecation.ts); absent or null: not deprecated. */
  deprecated?: { message: string; deprecated_at: string; deprecated_by: string } | null;
}

/** One published version. `id` is `<name>@<version>`; immutable but for `yanked` and `yank`. */
export interface RegistryVersionRecord extends RegistryVersion, IdentityMark {
  id: string;
  /** ArchiveStore key of its archive (archiveKey(name, version, archive_sha256)). */
  archive_key: string;
}

/**
 * The README.md of one version (docs/registry.md "README"), kept apart from the version record so
 * that listing versions (every package page, the search index's loads) never reads README text.
 * `id` is `readmeId(name, version, archive_sha256)`: the text belongs to exactly one archive, so
 * the loser of two concurrent publishes of one version never replaces the winner's README.
 */
export interface RegistryReadmeRecord {
  id: string;
  name: string;
  version: string;
  archive_sha256: string;
  /** The Markdown source as published (at most MAX_README_BYTES); rendered when served. */
  text: string;
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
  /** README text per published archive (RegistryReadmeRecord). */
  readmes: 'registry_readmes',
  keys: 'registry_keys',
  /** Publishers' own tokens (auth/registry-tokens.ts): the key records, and what each may do. */
  tokens: 'registry_tokens',
  tokenGrants: 'registry_token_grants',
  issuers: 'registry_issuers',
  migrations: 'registry_migrations',
  /** Teams owning packages, with their members and invitations (teams/team-records.ts). */
  teams: 'registry_teams',
  /** Per package, the CI identities that may publish it (trusted-publishing/trusted-publishers.ts). */
  trustedPublishers: 'registry_trusted_publishers',
} as const;

/** The store counter bumped by every publish, yank, un-yank and owner change: search indexes rebuild when it moves. */
export const REGISTRY_GENERATION_COUNTER = 'registry:generation';

export function versionId(name: string, version: string): string {
  return `${name}@${version}`;
}

/** The id of the README of the archive `archive_sha256` of `name@version`. */
export function readmeId(name: string, version: string, archiveSha256: string): string {
  return `${versionId(name, version)}#${archiveSha256}`;
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
  /** README text of published versions, read one at a time (the README routes and page). */
  readmes: Collection<RegistryReadmeRecord>;
}

export function registryRecords(store: Store): RegistryRecords {
  return {
    packages: store.collection<RegistryPackageRecord>(REGISTRY_COLLECTIONS.packages),
    versions: store.collection<RegistryVersionRecord>(REGISTRY_COLLECTIONS.versions, { indexes: [{ field: 'name' }] }),
    history: store.log<RegistryHistoryRecord>(REGISTRY_COLLECTIONS.history, { indexes: ['name'] }),
    revocations: store.log<RevocationRecord>(REGISTRY_COLLECTIONS.revocations, { indexes: ['name'] }),
    collections: store.collection<RegistryCollectionRecord>(REGISTRY_COLLECTIONS.collections),
    migrations: store.collection<IdentityMigrationRecord>(REGISTRY_COLLECTIONS.migrations),
    readmes: store.collection<RegistryReadmeRecord>(REGISTRY_COLLECTIONS.readmes),
  };
}
