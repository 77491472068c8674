/**
 * Where the registry keeps archive bytes (docs/registry.md "Storage"): a port with one adapter per
 * backend (the local filesystem by default, an S3-compatible bucket with `[registry.s3]`), all
 * passing one conformance suite. Metadata lives in the platform store; this holds bytes only.
 *
 * Keys are `<name>/<name>-<version>.tar.gz` (archiveKey): a package name and a semver version
 * hold no `/`, `..` or whitespace, so a key never leaves its prefix.
 */
export interface ArchiveStore {
  /** Stores `bytes` under `key`. Writing the same key again with the same bytes is harmless. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes under `key`, or null. */
  get(key: string): Promise<Uint8Array | null>;
  /** Removes `key` (absent is fine). */
  delete(key: string): Promise<void>;
  /** Reachable and writable? For `/health`. */
  health(): Promise<{ status: 'ok' | 'down'; detail?: string }>;
  close(): Promise<void>;
}

export function archiveKey(name: string, version: string): string {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name) || !/^[0-9A-Za-z.+-]+$/.test(version) || version.includes('..'))
    throw new Error(`not an archive key: ${name}@${version}`);
  return `${name}/${name}-${version}.tar.gz`;
}
