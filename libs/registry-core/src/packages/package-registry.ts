import type {
  RegistryDownloads,
  RegistryHistory,
  RegistryPackage,
  RegistryPackageOwners,
  RegistrySigningKey,
  RegistryVersion,
  RegistryVersionList,
  RegistryYankBody,
  Revocation,
  RevocationFeed,
} from '@agent-platform/contracts';
import { downloadVersion, readHistory, readPackage, readVersion, readVersions } from './package-reads.ts';
import { acceptOwner, readOwners, replaceOwners } from './package-owners.ts';
import { setDeprecation } from './package-deprecation.ts';
import { setDistTag } from './package-dist-tags.ts';
import { countDownload, readDownloads } from './package-downloads.ts';
import { publishVersion } from './publish-version.ts';
import { openRegistryContext, type PackageRegistryDeps, type RegistryActor } from './registry-context.ts';
import { readReadme, type PackageReadme } from './package-readme.ts';
import { packageRevocations, revocationFeed } from './revocation-log.ts';
import { yankVersion } from './yank-version.ts';

/**
 * The registry's package service (docs/registry.md): publish, read, download, yank, owners,
 * history and the revocation feed, over the store port, an ArchiveStore and the registry's
 * signer. HTTP-free: apps/registry's routes parse, call this and return its answers. Every error
 * is a `RegistryError` in the spec's categories; a `PackageError` (category ValidationError)
 * lists every problem of an archive the validator refused.
 */
export interface PackageRegistry {
  /** A D4 archive; answers the signed version. 400 invalid, 403 not an owner, 409 exists or wrong type. */
  publish(archive: Uint8Array, actor: RegistryActor): Promise<RegistryVersion>;
  getPackage(name: string): Promise<RegistryPackage>;
  /** Highest first, yanked ones included. */
  listVersions(name: string): Promise<RegistryVersionList>;
  getVersion(name: string, version: string): Promise<RegistryVersion>;
  /** The archive, and the package's deprecation message when it is deprecated (counted as a download). */
  download(name: string, version: string): Promise<{ version: RegistryVersion; bytes: Uint8Array; deprecated: string | null }>;
  /** Oldest first. */
  history(name: string): Promise<RegistryHistory>;
  yank(name: string, version: string, body: RegistryYankBody, actor: RegistryActor): Promise<RegistryVersion>;
  /** An owner's list: removals at once, additions invited (two-sided); a registry admin's list applies at once. */
  setOwners(name: string, owners: readonly string[], actor: RegistryActor): Promise<RegistryPackage>;
  /** The invited owner (`owner` absent: the caller; `team:<name>`: a team the caller owns) joins the owners. */
  acceptOwner(name: string, owner: string | undefined, actor: RegistryActor): Promise<RegistryPackage>;
  /** The owners, and the pending invitations the caller may see (package-owners.ts `readOwners`). */
  owners(name: string, actor: RegistryActor): Promise<RegistryPackageOwners>;
  /** A message deprecates the package (every version still installs); null takes the mark off. */
  setDeprecation(name: string, message: string | null, actor: RegistryActor): Promise<RegistryPackage>;
  /** Points `tag` at `version` (null removes it); `latest` is computed, never set. */
  setDistTag(name: string, tag: string, version: string | null, actor: RegistryActor): Promise<RegistryPackage>;
  /** Downloads per version and per day (the last 90 days). */
  downloads(name: string): Promise<RegistryDownloads>;
  /** The signed feed of the security yanks after `since`. */
  revocations(since: number): Promise<RevocationFeed>;
  /** The README of `version` (null: of the version the package page shows); 404 kind `readme` when it has none. */
  readme(name: string, version: string | null): Promise<PackageReadme>;
  /** The security yanks of one package, oldest first (a version stays revoked after an un-yank). */
  packageRevocations(name: string): Promise<Revocation[]>;
  signingKey(): RegistrySigningKey;
}

export function createPackageRegistry(deps: PackageRegistryDeps): PackageRegistry {
  const ctx = openRegistryContext(deps);
  return {
    publish: (archive, actor) => publishVersion(ctx, archive, actor),
    getPackage: (name) => readPackage(ctx, name),
    listVersions: (name) => readVersions(ctx, name),
    getVersion: (name, version) => readVersion(ctx, name, version),
    async download(name, version) {
      const [found, pkg] = await Promise.all([downloadVersion(ctx, name, version), ctx.records.packages.get(name)]);
      await countDownload(ctx, name, version);
      return { ...found, deprecated: pkg?.doc.deprecated?.message ?? null };
    },
    history: (name) => readHistory(ctx, name),
    yank: (name, version, body, actor) => yankVersion(ctx, name, version, body, actor),
    setOwners: (name, owners, actor) => replaceOwners(ctx, name, owners, actor),
    acceptOwner: (name, owner, actor) => acceptOwner(ctx, name, owner, actor),
    owners: (name, actor) => readOwners(ctx, name, actor),
    setDeprecation: (name, message, actor) => setDeprecation(ctx, name, message, actor),
    setDistTag: (name, tag, version, actor) => setDistTag(ctx, name, tag, version, actor),
    downloads: (name) => readDownloads(ctx, name),
    revocations: (since) => revocationFeed(ctx, since),
    readme: (name, version) => readReadme(ctx, name, version),
    packageRevocations: (name) => packageRevocations(ctx, name),
    signingKey: () => deps.signer.publicKey,
  };
}
