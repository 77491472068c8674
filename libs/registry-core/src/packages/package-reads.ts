import type {
  RegistryHistory,
  RegistryPackage,
  RegistryVersion,
  RegistryVersionList,
} from '@agent-platform/contracts';
import { versionId, type RegistryPackageRecord, type RegistryVersionRecord } from '../registry-records.ts';
import { sha256Tagged } from '../signing/registry-signing.ts';
import { historyReader } from './identity-migration.ts';
import { packageView, sortHighestFirst, versionView } from './package-views.ts';
import { assertName, assertVersion, type RegistryContext } from './registry-context.ts';
import { RegistryErrors } from './registry-error.ts';

/**
 * A package as readers see it: its record and at least one version. A name whose first publish
 * was claimed but never completed (the archive store failed after the claim) stays reserved for
 * its publisher and is 404 to readers until a version lands.
 */
export async function loadPackage(
  ctx: RegistryContext,
  name: string,
): Promise<{ pkg: RegistryPackageRecord; versions: RegistryVersionRecord[] }> {
  assertName(name);
  const [pkg, versions] = await Promise.all([
    ctx.records.packages.get(name),
    ctx.records.versions.find({ where: { name } }),
  ]);
  if (pkg === null || versions.length === 0) throw RegistryErrors.notFound('package', name);
  return { pkg: pkg.doc, versions: versions.map((v) => v.doc) };
}

/** The public view: without the pending invitations (package-owners.ts `readOwners` shows them to those who may see them). */
export async function readPackage(ctx: RegistryContext, name: string): Promise<RegistryPackage> {
  const { pkg, versions } = await loadPackage(ctx, name);
  const { pending_owners: _invited, ...view } = packageView(pkg, versions);
  return view;
}

export async function readVersions(ctx: RegistryContext, name: string): Promise<RegistryVersionList> {
  const { versions } = await loadPackage(ctx, name);
  return { name, versions: sortHighestFirst(versions).map(versionView) };
}

export async function readVersionRecord(
  ctx: RegistryContext,
  name: string,
  version: string,
): Promise<RegistryVersionRecord> {
  assertName(name);
  assertVersion(version);
  const found = await ctx.records.versions.get(versionId(name, version));
  if (found === null) {
    // Say which part is unknown: the package, or only this version of it.
    if ((await ctx.records.versions.count({ name })) === 0) throw RegistryErrors.notFound('package', name);
    throw RegistryErrors.notFound('version', versionId(name, version));
  }
  return found.doc;
}

export async function readVersion(
  ctx: RegistryContext,
  name: string,
  version: string,
): Promise<RegistryVersion> {
  return versionView(await readVersionRecord(ctx, name, version));
}

/**
 * The archive of one exact version, yanked or not (a yank hides it from resolution only). The
 * bytes are checked against the recorded digest before they leave: a store that lost or changed
 * them is a 500 for the operator, never a download that fails verification later.
 */
export async function downloadVersion(
  ctx: RegistryContext,
  name: string,
  version: string,
): Promise<{ version: RegistryVersion; bytes: Uint8Array }> {
  const record = await readVersionRecord(ctx, name, version);
  let bytes: Uint8Array | null;
  try {
    bytes = await ctx.archives.get(record.archive_key);
  } catch (error) {
    // The adapters' messages name the backend, the key and the cause, never a credential.
    throw RegistryErrors.storage(`the archive store did not answer for ${record.id}: ${(error as Error).message}`, { name, version });
  }
  if (bytes === null)
    throw RegistryErrors.internal(`the archive of ${record.id} is missing from the archive store`);
  if (sha256Tagged(bytes) !== record.archive_sha256)
    throw RegistryErrors.internal(
      `the archive of ${record.id} in the archive store does not match its recorded sha256`,
    );
  return { version: versionView(record), bytes };
}

export async function readHistory(ctx: RegistryContext, name: string): Promise<RegistryHistory> {
  await loadPackage(ctx, name);
  const [entries, read] = await Promise.all([
    ctx.records.history.list({ where: { name }, order: 'asc' }),
    historyReader(ctx.records),
  ]);
  return {
    name,
    entries: entries.map((line) => {
      const { seq: _seq, name: _name, identities: _identities, ...entry } = read(line);
      return entry;
    }),
  };
}
