import type { PackageManifest, RegistryVersion } from '@agent-platform/contracts';
import { loadArchive, PackageError, parseVersion, type LoadedPackage } from '@agent-platform/packages';
import { StoreDuplicateError } from '@agent-platform/store';
import { archiveKey } from '../archive-store/archive-store.ts';
import { QUALIFIED_IDENTITIES, versionId, type RegistryPackageRecord, type RegistryVersionRecord } from '../registry-records.ts';
import { dropReadme, storeReadme } from './package-readme.ts';
import { sha256Tagged } from '../signing/registry-signing.ts';
import { versionView } from './package-views.ts';
import {
  afterChange,
  assertTokenAllows,
  type RegistryActor,
  type RegistryContext,
} from './registry-context.ts';
import { RegistryErrors } from './registry-error.ts';
import { unknownCategories } from '../taxonomy/taxonomy.ts';
import { withTeamsOf } from '../teams/team-membership.ts';
import { assertMayPublish, trustedPublishProvenance } from '../trusted-publishing/trusted-publishers.ts';

/**
 * The registry validates for every platform, not for its own: `min_platform_version` is the
 * installing platform's check (D4), so the validator gets no platform version to compare with
 * (libs/packages skips that one rule when `platformVersion` is not a version).
 */
const ANY_PLATFORM = '';

/**
 * `POST /packages` (docs/registry.md "Publish"). In order, so that bad input changes nothing and
 * a crash never shows a version without its bytes:
 * 1. validate the archive with the local-install validator, `[signing] content_hash` required;
 * 2. require every dependency to be published here, then claim the name (atomic: the first
 *    publisher owns it) or check ownership and type;
 * 3. write the bytes under a key naming their digest (a concurrent loser cannot overwrite them);
 * 4. sign, and insert the version record: the insert is the moment the version exists, and the
 *    unique id makes exactly one of two concurrent publishes win (the other is 409).
 */
export async function publishVersion(
  ctx: RegistryContext,
  archive: Uint8Array,
  actor: RegistryActor,
): Promise<RegistryVersion> {
  if (actor.role === 'reader')
    throw RegistryErrors.forbidden('role reader may not publish', { identity: actor.identity });
  const loaded = validate(archive);
  const { manifest } = loaded;
  const contentHash = requireContentHash(manifest);
  // Categories are paths of the registry's taxonomy (GET /taxonomy), so that search filters find them.
  const unknown = unknownCategories(manifest.package.metadata.categories);
  if (unknown.length > 0)
    throw RegistryErrors.validation(
      `unknown categories: ${unknown.join(', ')}; GET /taxonomy lists the categories this registry knows`,
      { categories: unknown },
    );
  const { name, version, type } = manifest.package;
  if ((parseVersion(version)?.build.length ?? 0) > 0)
    throw RegistryErrors.validation(
      `version ${version} carries build metadata: semver ignores it when comparing, so ${version.split('+')[0]} and ${version} would be one version; publish without '+...'`,
      { version },
    );
  await requirePublishedDependencies(ctx, manifest.dependencies);
  const id = versionId(name, version);
  const now = ctx.clock.now().toISOString();
  // A trusted-publishing token: the package must still trust its CI identity; recorded on the version.
  const provenance = await trustedPublishProvenance(ctx, actor, name);
  // Members of a team among the owners publish as owners: their membership is read now (no cache).
  const publisher = await withTeamsOf(ctx.store, actor, (await ctx.records.packages.get(name))?.doc.owners ?? []);
  await claimName(ctx, { name, type, identity: actor.identity, now }, publisher);
  if ((await ctx.records.versions.get(id)) !== null) throw versionExists(name, version);

  const archiveSha256 = sha256Tagged(archive);
  const key = archiveKey(name, version, archiveSha256);
  try {
    await ctx.archives.put(key, archive);
  } catch (error) {
    // An S3 outage or a full disk: an upstream error naming the store (502), never "internal
    // error"; nothing is recorded, so the same publish can simply be sent again.
    throw RegistryErrors.storage(`the archive store did not take the archive of ${id}: ${(error as Error).message}`, { name, version });
  }
  // Before the record, like the bytes: a version that exists has its README (keyed by this archive's digest).
  if (loaded.readme !== undefined) await storeReadme(ctx, { name, version, archive_sha256: archiveSha256, text: loaded.readme });
  const record: RegistryVersionRecord = {
    id,
    archive_key: key,
    ...describe(loaded, archive.byteLength),
    content_hash: contentHash,
    archive_sha256: archiveSha256,
    signature: ctx.signer.signVersion({
      name,
      version,
      archive_sha256: archiveSha256,
      content_hash: contentHash,
    }),
    key_id: ctx.signer.publicKey.key_id,
    published_at: now,
    published_by: actor.identity,
    yanked: false,
    yank: null,
    provenance,
    identities: QUALIFIED_IDENTITIES,
  };
  try {
    await ctx.records.versions.insert(record);
  } catch (error) {
    if (!(error instanceof StoreDuplicateError)) throw error;
    // Lost the race. Our bytes go unless they are the winner's too (same bytes, same key).
    const winner = await ctx.records.versions.get(id);
    if (winner !== null && winner.doc.archive_key !== key) {
      await ctx.archives.delete(key);
      await dropReadme(ctx, name, version, archiveSha256);
    }
    throw versionExists(name, version);
  }
  await afterChange(ctx, {
    name,
    at: now,
    action: 'publish',
    version,
    identity: actor.identity,
    reason: null,
    security: false,
    ...(provenance === null ? {} : { provenance }),
  });
  return versionView(record);
}

/** The local-install validator; every problem it finds is listed in `details.problems` (400). */
function validate(archive: Uint8Array): LoadedPackage {
  try {
    return loadArchive(archive, { platformVersion: ANY_PLATFORM });
  } catch (error) {
    if (error instanceof PackageError)
      throw RegistryErrors.validation(error.message, { problems: error.problems });
    throw error;
  }
}

function requireContentHash(manifest: PackageManifest): string {
  const hash = manifest.signing?.content_hash;
  if (hash !== undefined) return hash;
  // A present hash was already compared with the payload by the validator (rule content-hash-mismatch).
  throw RegistryErrors.validation(
    'package.toml has no [signing] content_hash: build the archive with `agent-platform package build`, which fills it',
    {
      problems: [
        {
          file: 'package.toml',
          field: 'signing.content_hash',
          rule: 'content-hash-missing',
          message: 'required to publish',
        },
      ],
    },
  );
}

/**
 * Every dependency must name a package with at least one version here (yanked ones count): a
 * version nobody could ever install is refused, not published (400, rule `dependency-unknown`).
 * Publish dependencies first.
 */
async function requirePublishedDependencies(ctx: RegistryContext, dependencies: Record<string, string>): Promise<void> {
  const names = Object.keys(dependencies).sort();
  const counts = await Promise.all(names.map((name) => ctx.records.versions.count({ name })));
  const unknown = names.filter((_, i) => counts[i] === 0);
  if (unknown.length === 0) return;
  throw RegistryErrors.validation(
    `dependencies never published to this registry: ${unknown.join(', ')}; publish them first`,
    {
      problems: unknown.map((name) => ({
        file: 'package.toml',
        field: `dependencies.${name}`,
        rule: 'dependency-unknown',
        message: `'${name}' has never been published to this registry`,
      })),
    },
  );
}

/**
 * The name's first publisher owns it; later versions come from its owners (or a registry admin)
 * and keep its type: a dependent resolving `claims-intake` expects the kind of package it got
 * before, so a version of another type is 409 Conflict with the name's current state.
 */
async function claimName(
  ctx: RegistryContext,
  claim: { name: string; type: RegistryPackageRecord['type']; identity: string; now: string },
  actor: RegistryActor,
): Promise<void> {
  await ctx.records.packages.update(claim.name, (current) => {
    if (current === null) {
      assertTokenAllows(actor, 'publish-new', claim.name);
      return {
        id: claim.name,
        name: claim.name,
        type: claim.type,
        owners: [claim.identity],
        created_at: claim.now,
        updated_at: claim.now,
        identities: QUALIFIED_IDENTITIES,
      };
    }
    assertMayPublish(current.doc, actor);
    if (current.doc.type !== claim.type)
      throw RegistryErrors.conflict(
        `package '${claim.name}' is a ${current.doc.type} package; a version of type ${claim.type} cannot be published under its name`,
        {
          name: claim.name,
          type: current.doc.type,
          published_type: claim.type,
        },
      );
    return null;
  });
}

function versionExists(name: string, version: string) {
  return RegistryErrors.conflict(
    `${name}@${version} is already published: versions are immutable; publish a new version`,
    { name, version },
  );
}

/** The manifest's fields of a RegistryVersion. */
function describe(loaded: LoadedPackage, size: number) {
  const { package: pkg, dependencies } = loaded.manifest;
  return {
    name: pkg.name,
    version: pkg.version,
    type: pkg.type,
    title: pkg.title,
    description: pkg.description,
    license: pkg.license ?? '',
    min_platform_version: pkg.min_platform_version,
    keywords: [...pkg.metadata.keywords],
    categories: [...pkg.metadata.categories],
    regions: [...pkg.metadata.regions],
    dependencies: { ...dependencies },
    ...(pkg.metadata.repository === undefined ? {} : { repository: pkg.metadata.repository }),
    ...(pkg.metadata.homepage === undefined ? {} : { homepage: pkg.metadata.homepage }),
    has_readme: loaded.readme !== undefined,
    size_bytes: size,
  } satisfies Partial<RegistryVersion>;
}
