import type { PackageManifest, PackageProblem, PackageType } from '@agent-platform/contracts';
import { contentHash } from './content-hash.ts';
import { pathOf } from './fields.ts';
import { checkManifest, MANIFEST_FILE } from './manifest.ts';
import {
  checkPayload,
  PAYLOAD_FILES,
  type PackagePayload,
  type PayloadFile,
} from './payloads/check-payload.ts';
import { PackageError } from './package-error.ts';
import { PLATFORM_VERSION } from './platform-version.ts';
import { createProblemList, WHOLE_FILE, type FileProblems } from './problems.ts';
import { checkReadme, README_FILE } from './readme-file.ts';

/** A package's files by relative POSIX path (`package.toml`, `payload/AGENT.md`); a trailing `/` marks a directory. */
export type PackageFiles = ReadonlyMap<string, Uint8Array>;

export const PAYLOAD_DIR = 'payload/';

export interface ValidateOptions {
  /** Defaults to this platform's version (PLATFORM_VERSION). */
  platformVersion?: string;
  /** Compare `[signing] content_hash` with the payload (default true; `package build` rewrites it instead). */
  checkContentHash?: boolean;
}

export interface ValidationReport {
  ok: boolean;
  /** Every fault; any one refuses the package. */
  problems: PackageProblem[];
  /** Worth a look, never refused (an unknown SKILL.md field, an ignored alias, ...). */
  warnings: PackageProblem[];
  /** Present when `ok`. */
  manifest?: PackageManifest;
  payload?: PackagePayload;
  /** `sha256:<hex>` of the payload file's bytes, when there is exactly one payload file. */
  content_hash?: string;
  /** The text of README.md at the package root, when it has one (not part of content_hash). */
  readme?: string;
}

/** A package that passed every rule. */
export interface LoadedPackage {
  manifest: PackageManifest;
  payload: PackagePayload;
  /** `sha256:<hex>` of the payload file's bytes. */
  content_hash: string;
  /** README.md at the package root, when present: documentation a registry shows, never run. */
  readme?: string;
  warnings: ValidationReport['warnings'];
}

/** The loaded package of a clean report, else a `PackageError` headed `heading` listing every problem. */
export function loadedOrThrow(report: ValidationReport, heading: string): LoadedPackage {
  const { manifest, payload, content_hash: hash, readme } = report;
  if (!report.ok || manifest === undefined || payload === undefined || hash === undefined)
    throw new PackageError(heading, report.problems);
  return { manifest, payload, content_hash: hash, ...(readme === undefined ? {} : { readme }), warnings: report.warnings };
}

/**
 * Checks a package held in memory (read from a directory or an archive) against every rule of
 * spec §Package manifests and DECISIONS D4, collecting all problems rather than stopping at
 * the first.
 */
export function validatePackageFiles(files: PackageFiles, options: ValidateOptions = {}): ValidationReport {
  const list = createProblemList();
  const manifestBytes = files.get(MANIFEST_FILE);
  const manifestProblems = list.in(MANIFEST_FILE);
  let result: ReturnType<typeof checkManifest> = {};
  if (manifestBytes === undefined)
    manifestProblems.add(WHOLE_FILE, 'manifest-missing', 'a package needs a package.toml at its root');
  else
    result = checkManifestBytes(manifestBytes, manifestProblems, options.platformVersion ?? PLATFORM_VERSION);

  for (const path of files.keys()) {
    if (path !== MANIFEST_FILE && path !== README_FILE && !path.startsWith(PAYLOAD_DIR))
      list
        .in(path)
        .warn(WHOLE_FILE, 'ignored-file', 'not part of a package (package.toml, README.md and payload/ only); ignored');
  }
  const readmeBytes = files.get(README_FILE);
  const readme = readmeBytes === undefined ? undefined : checkReadme(readmeBytes, list.in(README_FILE));
  const payloadFile =
    result.type === undefined ? undefined : locatePayload(files, result.type, (file) => list.in(file));
  const report: ValidationReport = { ok: false, problems: list.problems, warnings: list.warnings };
  if (readme !== undefined) report.readme = readme;
  if (payloadFile !== undefined) {
    const bytes = files.get(PAYLOAD_DIR + payloadFile) ?? new Uint8Array();
    const p = list.in(PAYLOAD_DIR + payloadFile);
    const payload = checkPayload(payloadFile, bytes, p, result.version);
    report.content_hash = contentHash(bytes);
    if (
      options.checkContentHash !== false &&
      result.contentHash !== undefined &&
      result.contentHash !== report.content_hash
    ) {
      manifestProblems.add(
        'signing.content_hash',
        'content-hash-mismatch',
        `does not match the payload (${PAYLOAD_DIR + payloadFile} hashes to ${report.content_hash}); run package build to refresh it`,
      );
    }
    if (payload !== undefined && result.manifest !== undefined)
      checkAcrossFiles(result.manifest, payload, manifestProblems);
    if (payload !== undefined && list.problems.length === 0) report.payload = payload;
  }
  if (result.manifest !== undefined && list.problems.length === 0) report.manifest = result.manifest;
  report.ok = list.problems.length === 0 && report.manifest !== undefined && report.payload !== undefined;
  return report;
}

/**
 * The largest package.toml read: far above any real manifest (a few KiB), and checked before the
 * text is decoded or parsed, so a huge one (which gzip packs into a small archive) costs nothing.
 */
export const MAX_MANIFEST_BYTES = 64 * 1024;

function checkManifestBytes(
  bytes: Uint8Array,
  p: FileProblems,
  platformVersion: string,
): ReturnType<typeof checkManifest> {
  if (bytes.byteLength > MAX_MANIFEST_BYTES) {
    p.add(WHOLE_FILE, 'manifest-too-large', `is ${bytes.byteLength} bytes, larger than ${MAX_MANIFEST_BYTES} bytes: a manifest holds metadata only`);
    return {};
  }
  try {
    return checkManifest(new TextDecoder('utf-8', { fatal: true }).decode(bytes), p, { platformVersion });
  } catch {
    p.add(WHOLE_FILE, 'utf8', 'must be UTF-8 text');
    return {};
  }
}

/**
 * `payload/` holds exactly the one payload file of the package's type (D4). Returns that file's
 * name, reporting a missing file and every other entry.
 */
function locatePayload(
  files: PackageFiles,
  type: PackageType,
  problemsIn: (file: string) => FileProblems,
): PayloadFile | undefined {
  const expected = PAYLOAD_FILES[type];
  const present = [...files.keys()]
    .filter((path) => path.startsWith(PAYLOAD_DIR) && path !== PAYLOAD_DIR)
    .sort();
  const found = present.filter((path) =>
    (expected as readonly string[]).includes(path.slice(PAYLOAD_DIR.length)),
  );
  const chosen = found[0]?.slice(PAYLOAD_DIR.length) as PayloadFile | undefined;
  const names = expected.join(' or ');
  for (const path of present) {
    if (path === found[0]) continue;
    const p = problemsIn(path);
    if (found.includes(path)) p.add(WHOLE_FILE, 'payload-extra', `payload/ holds ${names}, not both`);
    else
      p.add(
        WHOLE_FILE,
        'payload-extra',
        `payload/ of a ${type} package must hold only ${names}${hint(path, expected)}`,
      );
  }
  if (chosen === undefined) {
    problemsIn(PAYLOAD_DIR + (expected[0] ?? '')).add(
      WHOLE_FILE,
      'payload-missing',
      `payload/ of a ${type} package must hold ${names}`,
    );
  }
  // With both integration payloads present there is no telling which one is meant: check neither.
  return found.length === 1 ? chosen : undefined;
}

function hint(path: string, expected: readonly string[]): string {
  const name = path.slice(PAYLOAD_DIR.length);
  const match = expected.find((e) => e.toLowerCase() === name.toLowerCase());
  return match === undefined ? '' : ` (did you mean ${match}? names are case-sensitive)`;
}

/**
 * Rules that need both files: an adapter integration's `tool_map` must point at operations the
 * adapter defines (an MCP server's tools are only known once it runs).
 */
function checkAcrossFiles(manifest: PackageManifest, payload: PackagePayload, p: FileProblems): void {
  if (payload.file !== 'adapter.json') return;
  const operations = new Set(payload.data.operations.map((o) => o.name));
  for (const [contract, implementation] of Object.entries(manifest.implements)) {
    for (const [tool, native] of Object.entries(implementation.tool_map)) {
      if (!operations.has(native)) {
        p.add(
          pathOf(pathOf(pathOf('implements', contract), 'tool_map'), tool),
          'tool-map-target',
          `'${native}' is not an operation of payload/adapter.json`,
        );
      }
    }
  }
}
