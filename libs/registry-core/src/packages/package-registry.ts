import type {
  RegistryHistory,
  RegistryPackage,
  RegistrySigningKey,
  RegistryVersion,
  RegistryVersionList,
  RegistryYankBody,
  RevocationFeed,
} from '@agent-platform/contracts';
import { downloadVersion, readHistory, readPackage, readVersion, readVersions } from './package-reads.ts';
import { replaceOwners } from './package-owners.ts';
import { publishVersion } from './publish-version.ts';
import { openRegistryContext, type PackageRegistryDeps, type RegistryActor } from './registry-context.ts';
import { revocationFeed } from './revocation-log.ts';
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
  download(name: string, version: string): Promise<{ version: RegistryVersion; bytes: Uint8Array }>;
  /** Oldest first. */
  history(name: string): Promise<RegistryHistory>;
  yank(name: string, version: string, body: RegistryYankBody, actor: RegistryActor): Promise<RegistryVersion>;
  setOwners(name: string, owners: readonly string[], actor: RegistryActor): Promise<RegistryPackage>;
  /** The signed feed of the security yanks after `since`. */
  revocations(since: number): Promise<RevocationFeed>;
  signingKey(): RegistrySigningKey;
}

export function createPackageRegistry(deps: PackageRegistryDeps): PackageRegistry {
  const ctx = openRegistryContext(deps);
  return {
    publish: (archive, actor) => publishVersion(ctx, archive, actor),
    getPackage: (name) => readPackage(ctx, name),
    listVersions: (name) => readVersions(ctx, name),
    getVersion: (name, version) => readVersion(ctx, name, version),
    download: (name, version) => downloadVersion(ctx, name, version),
    history: (name) => readHistory(ctx, name),
    yank: (name, version, body, actor) => yankVersion(ctx, name, version, body, actor),
    setOwners: (name, owners, actor) => replaceOwners(ctx, name, owners, actor),
    revocations: (since) => revocationFeed(ctx, since),
    signingKey: () => deps.signer.publicKey,
  };
}
