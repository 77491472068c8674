import type { CheckpointSink } from '@agent-platform/domain';
import type { ArchiveStore } from '@agent-platform/registry-core';

/** The object that names the latest checkpoint (a copy of it, so one read answers verify). */
export const LATEST_CHECKPOINT = 'latest.json';

/**
 * A `CheckpointSink` over an `ArchiveStore` (a directory, or an S3 bucket: the registry's
 * adapters, so there is one S3 client in the code base). Each checkpoint is written under its
 * own name first, then copied to `latest.json`: a crash between the two leaves the previous
 * latest, never a torn one.
 */
export function archiveCheckpointSink(store: ArchiveStore, describe: string): CheckpointSink {
  return {
    describe,
    async write(name, bytes) {
      await store.put(name, bytes);
      await store.put(LATEST_CHECKPOINT, bytes);
    },
    put: (name, bytes) => store.put(name, bytes),
    latest: () => store.get(LATEST_CHECKPOINT),
    read: (name) => store.get(name),
    close: () => store.close(),
  };
}
