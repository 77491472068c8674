import type { PlatformConfig } from '@agent-platform/contracts';
import type { ArchiveStore } from './archive-store.ts';

export type RegistryS3Settings = NonNullable<PlatformConfig['registry']['s3']>;

export interface S3ArchiveStoreOptions {
  /** One request (retries included) with no answer after this long fails. Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * Object lock on every put (the audit checkpoint sink): the bucket must have object lock
   * enabled. S3 requires a payload checksum with it, so one (SHA-256) is sent.
   */
  objectLock?: { mode: 'COMPLIANCE' | 'GOVERNANCE'; days: number; now?: () => Date };
  /** Content-Type of stored objects; default application/gzip (archives). */
  contentType?: string;
}

export const DEFAULT_S3_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Archives as objects of an S3-compatible bucket (`[registry.s3]`, docs/registry-storage.md; the
 * client is s3-archive-client.ts). The AWS SDK is loaded by the first operation, not when the
 * process starts: most processes never store an archive in S3 (docs/performance.md "Memory").
 */
export function openS3ArchiveStore(settings: RegistryS3Settings, options: S3ArchiveStoreOptions = {}): ArchiveStore {
  let opened: Promise<ArchiveStore> | null = null;
  const client = (): Promise<ArchiveStore> =>
    (opened ??= import('./s3-archive-client.ts').then((module) => module.openS3ArchiveClient(settings, options)));
  return {
    put: async (key, bytes) => (await client()).put(key, bytes),
    get: async (key) => (await client()).get(key),
    delete: async (key) => (await client()).delete(key),
    async health() {
      try {
        return await (await client()).health();
      } catch (error) {
        return { status: 'down', detail: (error as Error).message };
      }
    },
    async close() {
      const store = await opened?.catch(() => null);
      await store?.close();
    },
  };
}
