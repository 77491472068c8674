import { readmeId, type RegistryReadmeRecord, type RegistryVersionRecord } from '../registry-records.ts';
import { loadPackage, readVersionRecord } from './package-reads.ts';
import { latestOf, sortHighestFirst } from './package-views.ts';
import type { RegistryContext } from './registry-context.ts';
import { RegistryErrors } from './registry-error.ts';

/** A version's README as published: Markdown source, rendered by whoever shows it (apps/registry). */
export interface PackageReadme {
  name: string;
  version: string;
  /** The README.md text (UTF-8, at most 256 KiB: libs/packages checked it at publish). */
  text: string;
}

/**
 * Keeps the README of a publish, before its version record is inserted (publish-version.ts): a
 * crash after this and before the insert leaves an unreferenced README, never a version without
 * its README. Upsert: the same archive published again after such a crash writes the same text.
 */
export async function storeReadme(ctx: RegistryContext, readme: Omit<RegistryReadmeRecord, 'id'>): Promise<void> {
  await ctx.records.readmes.upsert({ id: readmeId(readme.name, readme.version, readme.archive_sha256), ...readme });
}

/** Removes the README of a publish that lost the race for its version (the winner's archive differs). */
export async function dropReadme(ctx: RegistryContext, name: string, version: string, archiveSha256: string): Promise<void> {
  await ctx.records.readmes.delete(readmeId(name, version, archiveSha256));
}

/**
 * `GET /packages/{name}/readme` (`version` null: of the version the package page shows, its
 * `latest`, or the highest one when every version is yanked) and
 * `GET /packages/{name}/{version}/readme`. 400 for a bad name or version, 404 for an unknown
 * package or version, and 404 (kind `readme`) for a version published without a README.
 */
export async function readReadme(ctx: RegistryContext, name: string, version: string | null): Promise<PackageReadme> {
  const record = version === null ? shownVersion((await loadPackage(ctx, name)).versions) : await readVersionRecord(ctx, name, version);
  const found = record.has_readme === true ? await ctx.records.readmes.get(readmeId(record.name, record.version, record.archive_sha256)) : null;
  if (found === null) throw RegistryErrors.notFound('readme', `${record.name}@${record.version}`);
  return { name: record.name, version: record.version, text: found.doc.text };
}

/** The version a package page shows (packageView's rule). */
function shownVersion(versions: readonly RegistryVersionRecord[]): RegistryVersionRecord {
  const sorted = sortHighestFirst(versions);
  const shown = latestOf(sorted) ?? sorted[0];
  // loadPackage answers 404 for a package without versions, so there is always one.
  if (shown === undefined) throw RegistryErrors.internal('a package without versions was loaded');
  return shown;
}
