import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE } from './manifest.ts';
import { WHOLE_FILE } from './problems.ts';
import { README_FILE } from './readme-file.ts';
import {
  loadedOrThrow,
  PAYLOAD_DIR,
  validatePackageFiles,
  type LoadedPackage,
  type PackageFiles,
  type ValidateOptions,
  type ValidationReport,
} from './validate-package-files.ts';

/**
 * The files of a package directory that make up the package: `package.toml`, the optional
 * `README.md` and the entries of `payload/` (sub-directories as `payload/<name>/`, which the
 * rules then refuse). Anything else in the directory (`dist/`, a LICENSE) is not part of the
 * package. Missing pieces are simply absent; validation names them.
 */
export async function readPackageDir(dir: string): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  const manifest = await readIfPresent(join(dir, MANIFEST_FILE));
  if (manifest !== undefined) files.set(MANIFEST_FILE, manifest);
  const readme = await readIfPresent(join(dir, README_FILE));
  if (readme !== undefined) files.set(README_FILE, readme);
  const entries = await readdir(join(dir, PAYLOAD_DIR), { withFileTypes: true }).catch((error: unknown) => {
    if (isNotFound(error)) return [];
    throw error;
  });
  for (const entry of entries) {
    const path = PAYLOAD_DIR + entry.name;
    if (entry.isDirectory()) files.set(`${path}/`, new Uint8Array());
    else files.set(path, await readFile(join(dir, path)));
  }
  return files;
}

/** Every problem of the package in `dir`; a directory that does not exist is one problem. */
export async function validatePackage(dir: string, options: ValidateOptions = {}): Promise<ValidationReport> {
  return (await readValidatedPackage(dir, options)).report;
}

/** The report together with the files it judged, for callers that go on to use them (build). */
export async function readValidatedPackage(
  dir: string,
  options: ValidateOptions = {},
): Promise<{ report: ValidationReport; files: PackageFiles }> {
  const dirProblem = (message: string) => ({
    report: {
      ok: false,
      problems: [{ file: dir, field: WHOLE_FILE, rule: 'package-dir', message }],
      warnings: [],
    },
    files: new Map<string, Uint8Array>(),
  });
  const info = await stat(dir).catch(() => undefined);
  if (info === undefined) return dirProblem('no such directory');
  if (!info.isDirectory())
    return dirProblem('not a directory: a package is a directory holding package.toml and payload/');
  let files: PackageFiles;
  try {
    files = await readPackageDir(dir);
  } catch (error) {
    return dirProblem(`cannot read: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { report: validatePackageFiles(files, options), files };
}

/** The package in `dir`, or a `PackageError` listing every problem. */
export async function loadPackage(dir: string, options: ValidateOptions = {}): Promise<LoadedPackage> {
  return loadedOrThrow(await validatePackage(dir, options), `package ${dir} is not valid`);
}

async function readIfPresent(path: string): Promise<Uint8Array | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
