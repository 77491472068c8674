import type { RegistrySearchHit, RegistryVersion } from '@agent-platform/contracts';
import { compareSemVer, parseVersion, type SemVer } from '@agent-platform/packages';

/** What a hit shows, before its score. */
export type SearchView = Omit<RegistrySearchHit, 'score'>;

/** The searchable text fields, in ranking order (search-ranking.ts gives each its weight). */
export const TEXT_FIELDS = ['name', 'title', 'keywords', 'description'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** One package in the index: its latest listed version's view, its words per field, its filter values. */
export interface SearchEntry {
  view: SearchView;
  name: string;
  /** Lower-case words of each text field, in TEXT_FIELDS order. */
  words: readonly (readonly string[])[];
  /** Lower case, for the exact `keyword` filter. */
  keywords: ReadonlySet<string>;
  categories: readonly string[];
  /** Upper case; empty = every region. */
  regions: ReadonlySet<string>;
  /** The latest listed version's dependencies, name -> constraint (reverse dependencies). */
  dependencies: Readonly<Record<string, string>>;
}

/** Lower-case words of `text`: letters and digits, anything else separates. */
export function words(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
}

export function searchEntry(version: RegistryVersion): SearchEntry {
  const view: SearchView = {
    name: version.name,
    type: version.type,
    title: version.title,
    description: version.description,
    latest: version.version,
    keywords: version.keywords,
    categories: version.categories,
    regions: version.regions,
  };
  return {
    view,
    name: version.name,
    words: [words(version.name), words(version.title), words(version.keywords.join(' ')), words(version.description)],
    keywords: new Set(version.keywords.map((k) => k.toLowerCase())),
    categories: version.categories,
    regions: new Set(version.regions.map((r) => r.toUpperCase())),
    dependencies: version.dependencies,
  };
}

/**
 * The version search shows for a package: the highest non-yanked release, or the highest
 * non-yanked pre-release when no release is listed (as `latest` of GET /packages/{name});
 * null when every version is yanked, and the package is not found.
 */
export function latestListed<V extends Pick<RegistryVersion, 'version' | 'yanked'>>(versions: readonly V[]): V | null {
  let best: { v: V; semver: SemVer } | null = null;
  for (const v of versions) {
    if (v.yanked) continue;
    const semver = parseVersion(v.version);
    if (semver === undefined) continue;
    if (best === null || rank(semver, best.semver) > 0) best = { v, semver };
  }
  return best?.v ?? null;
}

/** Releases above pre-releases, then semver order. */
function rank(a: SemVer, b: SemVer): number {
  const aRelease = a.prerelease.length === 0;
  const bRelease = b.prerelease.length === 0;
  if (aRelease !== bRelease) return aRelease ? 1 : -1;
  return compareSemVer(a, b);
}
