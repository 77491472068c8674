import {
  PACKAGE_TYPES,
  type PackageManifest,
  type PackageSection,
  type PackageType,
} from '@agent-platform/contracts';
import { parse as parseToml } from 'smol-toml';
import { checkKeys, pathOf, readString, readTable, type Table } from './fields.ts';
import { checkDependencies, checkImplements, checkSigning, checkStandards } from './manifest-sections.ts';
import { checkMetadata } from './manifest-metadata.ts';
import { packageNameFaults } from './package-name.ts';
import { countingProblems, syntaxMessage, WHOLE_FILE, type FileProblems } from './problems.ts';
import { compareVersions, isVersion } from './semver.ts';

export const MANIFEST_FILE = 'package.toml';

export interface ManifestOptions {
  /** The running platform's version; a newer `min_platform_version` is refused (D4). */
  platformVersion: string;
}

const TOP_KEYS = ['package', 'dependencies', 'standards', 'implements', 'signing'] as const;
const PACKAGE_KEYS = [
  'type',
  'name',
  'title',
  'version',
  'description',
  'license',
  'min_platform_version',
  'metadata',
] as const;
const MAX_DESCRIPTION = 500;

export interface ManifestResult {
  /** The normalized manifest; only when the file has no fault. */
  manifest?: PackageManifest;
  /** What could be read despite faults elsewhere, so the payload is still checked. */
  type?: PackageType;
  version?: string;
  contentHash?: string;
}

/**
 * Checks `package.toml` against every rule of spec §Package manifests, reporting each fault to
 * `problems`.
 */
export function checkManifest(
  text: string,
  problems: FileProblems,
  options: ManifestOptions,
): ManifestResult {
  const p = countingProblems(problems);
  let doc: Table;
  try {
    doc = parseToml(text);
  } catch (error) {
    p.add(WHOLE_FILE, 'toml-syntax', `not valid TOML: ${syntaxMessage(error)}`);
    return {};
  }
  checkKeys(p, doc, TOP_KEYS, '');
  const { section: pkg, type, name, version } = checkPackageSection(p, doc, options);
  const dependencies = checkDependencies(p, doc, name);
  const implementations = checkImplements(p, doc, type);
  const standards = checkStandards(p, doc, type);
  const signing = checkSigning(p, doc);
  const result: ManifestResult = {};
  if (p.count() === 0 && pkg !== undefined) {
    const manifest: PackageManifest = { package: pkg, dependencies, implements: implementations };
    if (standards !== undefined) manifest.standards = standards;
    if (signing !== undefined) manifest.signing = signing;
    result.manifest = manifest;
  }
  if (type !== undefined) result.type = type;
  if (version !== undefined) result.version = version;
  if (signing !== undefined) result.contentHash = signing.content_hash;
  return result;
}

interface SectionResult {
  section?: PackageSection;
  type?: PackageType;
  name?: string;
  version?: string;
}

function checkPackageSection(p: FileProblems, doc: Table, options: ManifestOptions): SectionResult {
  const table = readTable(p, doc, 'package', '', { required: true });
  if (table === undefined) return {};
  checkKeys(p, table, PACKAGE_KEYS, 'package');
  const type = checkType(p, table);
  const name = checkName(p, table);
  const title = readString(p, table, 'title', 'package', { required: true, nonBlank: true });
  const version = checkVersion(p, table, 'version');
  const description = readString(p, table, 'description', 'package', { required: true, nonBlank: true });
  if (description !== undefined && description.length > MAX_DESCRIPTION) {
    p.add(
      'package.description',
      'max-length',
      `must be at most ${MAX_DESCRIPTION} characters (got ${description.length})`,
    );
  }
  const license = checkLicense(p, table, 'package');
  const minPlatform = checkVersion(p, table, 'min_platform_version');
  if (
    minPlatform !== undefined &&
    isVersion(options.platformVersion) &&
    compareVersions(minPlatform, options.platformVersion) > 0
  ) {
    p.add(
      'package.min_platform_version',
      'min-platform-version',
      `needs platform ${minPlatform} or newer; this platform is ${options.platformVersion}`,
    );
  }
  const metadata = checkMetadata(p, table);
  const partial: SectionResult = {};
  if (type !== undefined) partial.type = type;
  if (name !== undefined) partial.name = name;
  if (version !== undefined) partial.version = version;
  if ([type, name, title, version, description, minPlatform].includes(undefined)) return partial;
  const section: PackageSection = {
    type: type as PackageType,
    name: name as string,
    title: title as string,
    version: version as string,
    description: description as string,
    min_platform_version: minPlatform as string,
    metadata,
  };
  if (license !== undefined) section.license = license;
  return { ...partial, section };
}

function checkType(p: FileProblems, table: Table): PackageType | undefined {
  const type = readString(p, table, 'type', 'package', { required: true });
  if (type === undefined) return undefined;
  if ((PACKAGE_TYPES as readonly string[]).includes(type)) return type as PackageType;
  p.add(
    'package.type',
    'package-type',
    `must be one of ${PACKAGE_TYPES.join(', ')} (got ${JSON.stringify(type.slice(0, 40))})`,
  );
  return undefined;
}

function checkName(p: FileProblems, table: Table): string | undefined {
  const name = readString(p, table, 'name', 'package', { required: true });
  if (name === undefined) return undefined;
  const faults = packageNameFaults(name);
  for (const fault of faults) p.add('package.name', fault.rule, fault.message);
  return faults.length === 0 ? name : undefined;
}

function checkVersion(p: FileProblems, table: Table, key: string): string | undefined {
  const version = readString(p, table, key, 'package', { required: true });
  if (version === undefined) return undefined;
  if (isVersion(version)) return version;
  p.add(
    pathOf('package', key),
    'semver',
    `must be a semver version such as 1.2.3 (got ${JSON.stringify(version.slice(0, 40))})`,
  );
  return undefined;
}

/** `license`: optional; when present non-empty and on one line (no newline or tab). */
export function checkLicense(p: FileProblems, table: Table, at: string): string | undefined {
  const license = readString(p, table, 'license', at);
  if (license === undefined) return undefined;
  const field = pathOf(at, 'license');
  if (license.trim() === '') {
    p.add(field, 'non-empty', 'must not be empty');
    return undefined;
  }
  if (/[\n\r\t]/.test(license)) {
    p.add(field, 'single-line', 'must not contain a newline or tab');
    return undefined;
  }
  return license;
}
