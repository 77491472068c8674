import { resolve } from 'node:path';
import type { PlatformConfig } from '@agent-platform/contracts';
import type { CheckpointSink } from '@agent-platform/domain';
import { openFsArchiveStore, openS3ArchiveStore } from '@agent-platform/registry-core';
import { archiveCheckpointSink } from './archive-checkpoint-sink.ts';

type CheckpointSettings = PlatformConfig['audit']['checkpoints'];

/**
 * The sink `[audit.checkpoints]` names: `[audit.checkpoints.s3]` (with object lock when
 * `object_lock_days` > 0), else the `sink` directory, else null (checkpoints off).
 */
export function openCheckpointSink(settings: CheckpointSettings, now: () => Date): CheckpointSink | null {
  const s3 = settings.s3;
  if (s3 !== undefined) {
    const store = openS3ArchiveStore(s3, {
      contentType: 'application/json',
      ...(settings.object_lock_days > 0 ? { objectLock: { mode: 'COMPLIANCE' as const, days: settings.object_lock_days, now } } : {}),
    });
    const prefix = s3.prefix === '' ? '' : `${s3.prefix.replace(/\/+$/, '')}/`;
    return archiveCheckpointSink(store, `s3://${s3.bucket}/${prefix}`);
  }
  if (settings.sink === '') return null;
  const dir = resolve(settings.sink);
  return archiveCheckpointSink(openFsArchiveStore(dir), `dir:${dir}`);
}
