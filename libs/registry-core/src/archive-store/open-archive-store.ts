import { join, resolve } from 'node:path';
import type { PlatformConfig } from '@agent-platform/contracts';
import type { ArchiveStore } from './archive-store.ts';
import { openFsArchiveStore } from './fs-archive-store.ts';
import { openS3ArchiveStore, type S3ArchiveStoreOptions } from './s3-archive-store.ts';

/** Where archives go when `[registry] archive_dir` is empty: `<data_dir>/registry/archives`. */
export function defaultArchiveDir(dataDir: string): string {
  return join(dataDir, 'registry', 'archives');
}

/**
 * The registry's archive store from its settings (docs/registry-storage.md): `[registry.s3]`
 * present = that bucket; else files under `archive_dir`, or `<dataDir>/registry/archives` when
 * it is empty. The config loader makes a relative `archive_dir` absolute against the config
 * file's directory, like `data_dir`; one still relative here (a config built in code) is taken
 * against the process's working directory.
 */
export function openArchiveStore(
  registry: Pick<PlatformConfig['registry'], 'archive_dir' | 's3'>,
  dataDir: string,
  options: S3ArchiveStoreOptions = {},
): ArchiveStore {
  if (registry.s3 !== undefined) return openS3ArchiveStore(registry.s3, options);
  return openFsArchiveStore(
    registry.archive_dir === '' ? defaultArchiveDir(dataDir) : resolve(registry.archive_dir),
  );
}
