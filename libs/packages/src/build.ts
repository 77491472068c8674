import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PackageManifest, PackageProblem } from '@agent-platform/contracts';
import { createArchive } from './archive.ts';
import { MANIFEST_FILE } from './manifest.ts';
import { readValidatedPackage } from './package-dir.ts';
import { setContentHash } from './set-content-hash.ts';
import { loadedOrThrow, validatePackageFiles, type ValidateOptions } from './validate-package-files.ts';

export interface BuildResult {
  /** Where the archive was written: `<outDir>/<name>-<version>.tar.gz`. */
  archive_path: string;
  /** Hex SHA-256 of the archive bytes (what a registry records for a download). */
  sha256: string;
  /** `sha256:<hex>` of the payload, now in `[signing] content_hash`. */
  content_hash: string;
  /** True when package.toml was rewritten (its content_hash was absent or stale). */
  manifest_updated: boolean;
  manifest: PackageManifest;
  /** Warnings of the validation (never a reason to refuse the build). */
  warnings: PackageProblem[];
}

/**
 * Builds the package in `dir`: validates it (every problem refuses the build with a
 * `PackageError`), writes the payload's hash into `[signing] content_hash` of package.toml
 * (only that line changes), then writes the archive. `outDir` defaults to `<dir>/dist`, which
 * is not part of the package.
 */
export async function buildPackage(
  dir: string,
  outDir = join(dir, 'dist'),
  options: ValidateOptions = {},
): Promise<BuildResult> {
  const { report, files } = await readValidatedPackage(dir, { ...options, checkContentHash: false });
  const loaded = loadedOrThrow(report, `package ${dir} is not valid; nothing was built`);
  const manifestText = new TextDecoder().decode(files.get(MANIFEST_FILE));
  const updatedText = setContentHash(manifestText, loaded.content_hash);
  const updated = new Map(files).set(MANIFEST_FILE, new TextEncoder().encode(updatedText));
  const final = loadedOrThrow(
    validatePackageFiles(updated, options),
    `package ${dir} is not valid after setting its content hash`,
  );
  if (updatedText !== manifestText) await writeFile(join(dir, MANIFEST_FILE), updatedText);

  const archive = createArchive(updated);
  const { name, version } = final.manifest.package;
  const archivePath = join(outDir, `${name}-${version}.tar.gz`);
  await mkdir(outDir, { recursive: true });
  await writeFile(archivePath, archive);
  return {
    archive_path: archivePath,
    sha256: createHash('sha256').update(archive).digest('hex'),
    content_hash: final.content_hash,
    manifest_updated: updatedText !== manifestText,
    manifest: final.manifest,
    warnings: final.warnings,
  };
}
