import {
  PACKAGE_TYPES,
  type CollectionAuthor,
  type CollectionEntry,
  type CollectionManifest,
  type PackageManifest,
  type PackageProblem,
  type PackageType,
} from '@agent-platform/contracts';
import { parse as parseToml } from 'smol-toml';
import {
  checkKeys,
  isHttpUrl,
  isTable,
  pathOf,
  readArray,
  readBoolean,
  readString,
  readStringArray,
  readTable,
  typeProblem,
  type Table,
} from './fields.ts';
import { checkLicense } from './manifest.ts';
import { readRegions } from './manifest-metadata.ts';
import { packageNameFaults } from './package-name.ts';
import { PLATFORM_VERSION } from './platform-version.ts';
import {
  countingProblems,
  createProblemList,
  syntaxMessage,
  WHOLE_FILE,
  type FileProblems,
} from './problems.ts';
import { compareVersions, isVersion, satisfies } from './semver.ts';

export const COLLECTION_FILE = 'COLLECTION.toml';

const KEYS = [
  'name',
  'display_name',
  'description',
  'version',
  'license',
  'min_platform_version',
  'featured',
  'tags',
  'icon',
  'author',
  'metadata',
  'packages',
] as const;
const ENTRY_KEYS = ['name', 'version', 'package_type', 'is_dependency'] as const;

export interface CollectionReport {
  ok: boolean;
  problems: PackageProblem[];
  /** Present when `ok`. */
  collection?: CollectionManifest;
}

/**
 * Checks a COLLECTION.toml (spec §Package manifests): the collection's own fields, then each
 * `[[packages]]` entry pinned at an exact version. Whether the entries hold every transitive
 * dependency needs the packages' manifests: `checkCollectionClosure`.
 */
export function validateCollection(
  text: string,
  options: { platformVersion?: string } = {},
): CollectionReport {
  const list = createProblemList();
  const p = countingProblems(list.in(COLLECTION_FILE));
  let doc: Table;
  try {
    doc = parseToml(text);
  } catch (error) {
    p.add(WHOLE_FILE, 'toml-syntax', `not valid TOML: ${syntaxMessage(error)}`);
    return { ok: false, problems: list.problems };
  }
  checkKeys(p, doc, KEYS, '');
  const collection = readCollection(p, doc, options.platformVersion ?? PLATFORM_VERSION);
  return p.count() === 0 ? { ok: true, problems: [], collection } : { ok: false, problems: list.problems };
}

function readCollection(p: FileProblems, doc: Table, platformVersion: string): CollectionManifest {
  const name = readString(p, doc, 'name', '', { required: true });
  for (const fault of name === undefined ? [] : packageNameFaults(name))
    p.add('name', fault.rule, fault.message);
  const version = readVersion(p, doc, 'version', true);
  const minPlatform = readVersion(p, doc, 'min_platform_version', false);
  if (
    minPlatform !== undefined &&
    isVersion(platformVersion) &&
    compareVersions(minPlatform, platformVersion) > 0
  ) {
    p.add(
      'min_platform_version',
      'min-platform-version',
      `needs platform ${minPlatform} or newer; this platform is ${platformVersion}`,
    );
  }
  const description = readString(p, doc, 'description', '', { required: true, nonBlank: true });
  if (description !== undefined && description.length > 500)
    p.add('description', 'max-length', `must be at most 500 characters (got ${description.length})`);
  const metadata = readTable(p, doc, 'metadata', '') ?? {};
  checkKeys(p, metadata, ['categories', 'regions'], 'metadata');
  const collection: CollectionManifest = {
    name: name ?? '',
    display_name: readString(p, doc, 'display_name', '', { required: true, nonBlank: true }) ?? '',
    description: description ?? '',
    version: version ?? '',
    license: readLicense(p, doc),
    featured: readBoolean(p, doc, 'featured', '') ?? false,
    tags: readStringArray(p, doc, 'tags', '', { nonBlank: true }),
    metadata: {
      categories: readStringArray(p, metadata, 'categories', 'metadata', { nonBlank: true }),
      regions: readRegions(p, metadata, 'metadata'),
    },
    packages: readEntries(p, doc),
  };
  if (minPlatform !== undefined) collection.min_platform_version = minPlatform;
  const icon = readString(p, doc, 'icon', '', { nonBlank: true });
  if (icon !== undefined) collection.icon = icon;
  const author = readAuthor(p, doc);
  if (author !== undefined) collection.author = author;
  return collection;
}

function readLicense(p: FileProblems, doc: Table): string {
  if (doc.license === undefined) p.add('license', 'required', 'required key is missing');
  return checkLicense(p, doc, '') ?? '';
}

function readVersion(
  p: FileProblems,
  table: Table,
  key: string,
  required: boolean,
  at = '',
): string | undefined {
  const version = readString(p, table, key, at, { required });
  if (version === undefined || isVersion(version)) return version;
  p.add(
    pathOf(at, key),
    'semver',
    `must be a semver version such as 1.2.3 (got ${JSON.stringify(version.slice(0, 40))})`,
  );
  return undefined;
}

function readAuthor(p: FileProblems, doc: Table): CollectionAuthor | undefined {
  const table = readTable(p, doc, 'author', '');
  if (table === undefined) return undefined;
  checkKeys(p, table, ['name', 'email', 'url'], 'author');
  const author: CollectionAuthor = {
    name: readString(p, table, 'name', 'author', { required: true, nonBlank: true }) ?? '',
  };
  const email = readString(p, table, 'email', 'author');
  if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email))
    p.add('author.email', 'email', 'must be an email address');
  else if (email !== undefined) author.email = email;
  const url = readString(p, table, 'url', 'author');
  if (url !== undefined && !isHttpUrl(url))
    p.add('author.url', 'http-url', 'must be a URL starting with http:// or https://');
  else if (url !== undefined) author.url = url;
  return author;
}

function readEntries(p: FileProblems, doc: Table): CollectionEntry[] {
  const items = readArray(p, doc, 'packages', '', { required: true }) ?? [];
  if (Array.isArray(doc.packages) && items.length === 0)
    p.add('packages', 'min-items', 'a collection holds at least one package');
  const entries: CollectionEntry[] = [];
  items.forEach((item, i) => {
    const at = pathOf('packages', i);
    if (!isTable(item)) return typeProblem(p, at, 'a table', item);
    checkKeys(p, item, ENTRY_KEYS, at);
    const name = readString(p, item, 'name', at, { required: true });
    const fault = name === undefined ? undefined : packageNameFaults(name)[0];
    if (fault !== undefined)
      p.add(pathOf(at, 'name'), 'package-name', `must be a package name: ${fault.message}`);
    if (name !== undefined && entries.some((e) => e.name === name))
      p.add(pathOf(at, 'name'), 'duplicate-package', `'${name}' is listed more than once`);
    const version = readVersion(p, item, 'version', true, at);
    const type = readString(p, item, 'package_type', at, { required: true });
    if (type !== undefined && !(PACKAGE_TYPES as readonly string[]).includes(type)) {
      p.add(pathOf(at, 'package_type'), 'package-type', `must be one of ${PACKAGE_TYPES.join(', ')}`);
    }
    const isDependency = readBoolean(p, item, 'is_dependency', at) ?? false;
    entries.push({
      name: name ?? '',
      version: version ?? '',
      package_type: (type ?? 'skill') as PackageType,
      is_dependency: isDependency,
    });
  });
  return entries;
}

/**
 * A collection must contain all transitive dependencies: every dependency of every listed
 * package (looked up in `manifests` by name) must be listed too, at a version its constraint
 * accepts, and each entry's `package_type` must be its manifest's type. `manifests` holds the
 * manifest of each listed package at its listed version; a missing one is `unknown-package`.
 */
export function checkCollectionClosure(
  collection: CollectionManifest,
  manifests: ReadonlyMap<string, PackageManifest>,
): PackageProblem[] {
  const list = createProblemList();
  const p = list.in(COLLECTION_FILE);
  const listed = new Map(collection.packages.map((entry) => [entry.name, entry]));
  collection.packages.forEach((entry, i) => {
    const manifest = manifests.get(entry.name);
    if (manifest === undefined)
      return p.add(
        pathOf(pathOf('packages', i), 'name'),
        'unknown-package',
        `no manifest for '${entry.name}'`,
      );
    if (manifest.package.type !== entry.package_type) {
      p.add(
        pathOf(pathOf('packages', i), 'package_type'),
        'package-type-mismatch',
        `'${entry.name}' is a ${manifest.package.type} package`,
      );
    }
    for (const [dependency, constraint] of Object.entries(manifest.dependencies)) {
      const pinned = listed.get(dependency);
      const field = pathOf(pathOf('packages', i), 'name');
      if (pinned === undefined)
        p.add(
          field,
          'missing-dependency',
          `'${entry.name}' depends on '${dependency}' (${constraint}), which the collection does not list`,
        );
      else if (!satisfies(pinned.version, constraint)) {
        p.add(
          field,
          'dependency-version',
          `'${entry.name}' needs '${dependency}' ${constraint}; the collection lists ${pinned.version}`,
        );
      }
    }
  });
  return list.problems;
}
