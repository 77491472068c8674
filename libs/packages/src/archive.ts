import { gunzipSync, gzipSync } from 'node:zlib';
import { MANIFEST_FILE } from './manifest.ts';
import { PackageError } from './package-error.ts';
import { WHOLE_FILE } from './problems.ts';
import { readTar, TarFormatError } from './read-tar.ts';
import { README_FILE } from './readme-file.ts';
import { writeTar } from './tar.ts';
import {
  loadedOrThrow,
  PAYLOAD_DIR,
  validatePackageFiles,
  type LoadedPackage,
  type PackageFiles,
  type ValidateOptions,
  type ValidationReport,
} from './validate-package-files.ts';

/** Unpacked content allowed in one archive: far above any real package, far below a gzip bomb. */
export const MAX_ARCHIVE_CONTENT_BYTES = 32 * 1024 * 1024;

/** Tar headers allowed in one archive (a package has three or four entries; tools add a few). */
export const MAX_ARCHIVE_ENTRIES = 1000;

/**
 * The archive of a package (D4): a gzipped tar of `package.toml`, `README.md` when the package
 * has one, `payload/` and the payload file, at the archive root, in that order. Same files, same
 * bytes (a package without a README gives the bytes it gave before READMEs were carried).
 */
export function createArchive(files: PackageFiles): Buffer {
  const paths = [...files.keys()]
    .filter((path) => path !== MANIFEST_FILE && path.startsWith(PAYLOAD_DIR) && path !== PAYLOAD_DIR)
    .sort();
  const readme = files.get(README_FILE);
  const entries = [
    { path: MANIFEST_FILE, bytes: files.get(MANIFEST_FILE) ?? new Uint8Array() },
    ...(readme === undefined ? [] : [{ path: README_FILE, bytes: readme }]),
    { path: PAYLOAD_DIR, bytes: new Uint8Array() },
    ...paths.map((path) => ({ path, bytes: files.get(path) ?? new Uint8Array() })),
  ];
  return gzipSync(writeTar(entries), { level: 9 });
}

/**
 * The files of a package archive by path, ready for `validatePackageFiles`. An archive made with
 * `tar czf x.tar.gz my-package/` (everything under one directory holding package.toml) is read
 * as if that directory were the root. The bytes are untrusted (a publisher's upload): anything
 * but a gzipped tar of files and directories within the limits throws a `PackageError` with one
 * problem of rule `archive` naming the fault (docs/packages.md "Untrusted archives"). Works in
 * memory only; memory use is bounded by `maxBytes` plus the tar headers `maxEntries` allows.
 */
export function readArchive(
  archive: Uint8Array,
  maxBytes = MAX_ARCHIVE_CONTENT_BYTES,
  maxEntries = MAX_ARCHIVE_ENTRIES,
): Map<string, Uint8Array> {
  let entries;
  try {
    entries = readTar(gunzip(archive, maxBytes, maxEntries), { maxBytes, maxEntries });
  } catch (error) {
    if (!(error instanceof TarFormatError)) throw error;
    throw new PackageError('not a valid package archive', [
      { file: '(archive)', field: WHOLE_FILE, rule: 'archive', message: error.message },
    ]);
  }
  const files = new Map(entries.map((entry) => [entry.path, entry.bytes]));
  return files.has(MANIFEST_FILE) ? files : stripSingleRoot(files);
}

/**
 * The tar inside the gzip stream, never longer than the content limit plus the most the tar
 * format adds around it (a header and padding per entry, the end blocks, a 10 KiB record).
 */
function gunzip(archive: Uint8Array, maxBytes: number, maxEntries: number): Buffer {
  if (archive[0] !== 0x1f || archive[1] !== 0x8b) {
    const plainTar =
      archive.length >= 512 && new TextDecoder().decode(archive.subarray(257, 262)) === 'ustar';
    throw new TarFormatError(
      plainTar
        ? 'a plain tar, not gzip-compressed: a package archive is a .tar.gz'
        : 'not gzip data: a package archive is a .tar.gz',
    );
  }
  const limit = maxBytes + maxEntries * 1024 + 10240;
  try {
    return gunzipSync(archive, { maxOutputLength: limit });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'ERR_BUFFER_TOO_LARGE')
      throw new TarFormatError(
        `archive content exceeds ${maxBytes} bytes (the gzip stream unpacks to more than ${limit})`,
        { cause: error },
      );
    if (code === 'Z_BUF_ERROR')
      throw new TarFormatError(`the gzip stream is truncated (${message})`, { cause: error });
    throw new TarFormatError(`the gzip stream is corrupt or has bytes after its end (${message})`, {
      cause: error,
    });
  }
}

/** Every problem of the package in `archive`; an unreadable archive is one `archive` problem. */
export function validateArchive(archive: Uint8Array, options: ValidateOptions = {}): ValidationReport {
  try {
    return validatePackageFiles(readArchive(archive), options);
  } catch (error) {
    if (error instanceof PackageError) return { ok: false, problems: error.problems, warnings: [] };
    throw error;
  }
}

/** The package in `archive`, or a `PackageError` listing every problem. */
export function loadArchive(archive: Uint8Array, options: ValidateOptions = {}): LoadedPackage {
  return loadedOrThrow(validateArchive(archive, options), 'package archive is not valid');
}

function stripSingleRoot(files: Map<string, Uint8Array>): Map<string, Uint8Array> {
  const roots = new Set([...files.keys()].map((path) => path.split('/')[0]));
  const [root] = roots;
  if (roots.size !== 1 || root === undefined || !files.has(`${root}/${MANIFEST_FILE}`)) return files;
  const stripped = new Map<string, Uint8Array>();
  for (const [path, bytes] of files) {
    const rest = path.slice(root.length + 1);
    if (rest !== '') stripped.set(rest, bytes);
  }
  return stripped;
}
