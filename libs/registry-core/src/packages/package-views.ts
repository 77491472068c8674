import type { RegistryPackage, RegistryVersion } from '@agent-platform/contracts';
import { compareVersions, parseVersion } from '@agent-platform/packages';
import type { RegistryPackageRecord, RegistryVersionRecord } from '../registry-records.ts';

/** Highest version first (semver precedence). */
export function sortHighestFirst<T extends { version: string }>(versions: readonly T[]): T[] {
  return [...versions].sort((a, b) => compareVersions(b.version, a.version));
}

/**
 * What new resolution picks as `latest` (cargo's rule): the highest non-yanked release; a
 * pre-release only when no non-yanked release exists; null when every version is yanked.
 */
export function latestOf<T extends { version: string; yanked: boolean }>(versions: readonly T[]): T | null {
  const live = sortHighestFirst(versions.filter((v) => !v.yanked));
  return live.find((v) => parseVersion(v.version)?.prerelease.length === 0) ?? live[0] ?? null;
}

/** The wire form of a stored version (the record's storage fields dropped; `provenance` always present). */
export function versionView(record: RegistryVersionRecord): RegistryVersion {
  const { id: _id, archive_key: _key, identities: _identities, ...view } = record;
  // Versions stored before trusted publishing have no field: they were published otherwise.
  return { ...view, provenance: view.provenance ?? null };
}

/** `GET /packages/{name}`: metadata of the latest version (of the highest one when all are yanked). */
export function packageView(
  pkg: RegistryPackageRecord,
  versions: readonly RegistryVersionRecord[],
): RegistryPackage {
  const sorted = sortHighestFirst(versions);
  const latest = latestOf(sorted);
  const shown = latest ?? sorted[0];
  return {
    name: pkg.name,
    type: pkg.type,
    title: shown?.title ?? pkg.name,
    description: shown?.description ?? '',
    owners: [...pkg.owners],
    pending_owners: [...(pkg.pending_owners ?? [])],
    latest: latest?.version ?? null,
    versions: sorted.map((v) => v.version),
    keywords: [...(shown?.keywords ?? [])],
    categories: [...(shown?.categories ?? [])],
    regions: [...(shown?.regions ?? [])],
    ...(shown === undefined ? {} : { license: shown.license }),
    ...(shown?.repository === undefined ? {} : { repository: shown.repository }),
    ...(shown?.homepage === undefined ? {} : { homepage: shown.homepage }),
    created_at: pkg.created_at,
    updated_at: pkg.updated_at,
    dist_tags: { ...(latest === null ? {} : { latest: latest.version }), ...(pkg.dist_tags ?? {}) },
    deprecated: pkg.deprecated ?? null,
  };
}
