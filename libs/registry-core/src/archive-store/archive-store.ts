/**
 * Where the registry keeps archive bytes (docs/registry-storage.md): a port with one adapter per
 * backend (the local filesystem by default, an S3-compatible bucket with `[registry.s3]`), all
 * passing one conformance suite (testing/archive-store-conformance.ts). Metadata lives in the
 * platform store; this holds bytes only.
 *
 * Keys are `<name>/<name>-<version>-<sha256 hex>.tar.gz` (archiveKey); adapters treat them as opaque
 * beyond `checkArchiveKey`, which refuses any key that could leave the store's root or prefix.
 */
export interface ArchiveStore {
  /**
   * Stores `bytes` under `key`, replacing what was there. Resolves once the bytes are durable.
   * A reader racing the replacement sees the old or the new bytes whole (the filesystem adapter
   * renames into place; S3 replaces objects atomically). The registry never rewrites a published
   * version's key with other bytes: versions are immutable.
   */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes under `key`, or null. */
  get(key: string): Promise<Uint8Array | null>;
  /** Removes `key` (absent is fine). */
  delete(key: string): Promise<void>;
  /** Reachable and writable? For `/health`. Never throws. */
  health(): Promise<{ status: 'ok' | 'down'; detail?: string }>;
  close(): Promise<void>;
}

/**
 * The key of one archive: a pure function of (name, version, archive sha256). The digest makes
 * the key name the bytes, so two concurrent publishes of one version with different bytes never
 * overwrite each other's archive: the record that wins the insert points at its own bytes, and
 * the loser removes only a key that is not the winner's (docs/registry.md "Crash safety").
 * `archiveSha256` is `sha256:<hex>` or the bare hex; without it the key has no digest (the form
 * of the first registry groundwork, kept for callers that only need a stable name).
 */
export function archiveKey(name: string, version: string, archiveSha256?: string): string {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name) || !/^[0-9A-Za-z.+-]+$/.test(version) || version.includes('..'))
    throw new Error(`not an archive key: ${name}@${version}`);
  if (archiveSha256 === undefined) return `${name}/${name}-${version}.tar.gz`;
  const hex = archiveSha256.startsWith('sha256:') ? archiveSha256.slice('sha256:'.length) : archiveSha256;
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`not an archive sha256: ${archiveSha256}`);
  return `${name}/${name}-${version}-${hex}.tar.gz`;
}

/**
 * Throws unless `key` is a relative path of non-empty segments, none `.` or `..`, without
 * backslashes or control characters, at most 1024 bytes (S3's own key limit).
 */
export function checkArchiveKey(key: string): void {
  const fault =
    key === ''
      ? 'empty'
      : Buffer.byteLength(key) > 1024
        ? 'longer than 1024 bytes'
        : key.startsWith('/')
          ? 'absolute'
          : [...key].some((c) => c === '\\' || c < ' ' || c === '\u007f')
            ? 'holds a backslash or a control character'
            : key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')
              ? 'holds an empty, "." or ".." segment'
              : undefined;
  if (fault !== undefined)
    throw new Error(`not an archive key (${fault}): ${JSON.stringify(key.slice(0, 200))}`);
}
