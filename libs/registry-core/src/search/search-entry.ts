import type { RegistrySearchHit, RegistryVersion } from '@agent-platform/contracts';
import { compareSemVer, parseVersion, type SemVer } from '@agent-platform/packages';

/** What a hit shows, before its score. */
export type SearchView = Omit<RegistrySearchHit, 'score'>;

/**
 * One package in the index: its latest listed version's view, plus each searchable field
 * pre-digested so that a query does no allocation per package. A `*Text` field is the field's
 * words, lower case, each preceded by one space: `text.includes(' ' + word)` is "some word of the
 * field starts with `word`", one native substring search instead of a loop over tokens.
 */
export interface SearchEntry {
  view: SearchView;
  name: string;
  nameText: string;
  titleText: string;
  keywordText: string;
  descriptionText: string;
  /** Lower case, for the exact `keyword` filter. */
  keywords: ReadonlySet<string>;
  categories: readonly string[];
  /** Upper case; empty = every region. */
  regions: ReadonlySet<string>;
}

/** Lower-case words of `text`: letters and digits, anything else separates. */
export function words(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
}

function wordText(text: string): string {
  const list = words(text);
  return list.length === 0 ? '' : ` ${list.join(' ')}`;
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
    nameText: wordText(version.name),
    titleText: wordText(version.title),
    keywordText: wordText(version.keywords.join(' ')),
    descriptionText: wordText(version.description),
    keywords: new Set(version.keywords.map((k) => k.toLowerCase())),
    categories: version.categories,
    regions: new Set(version.regions.map((r) => r.toUpperCase())),
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
