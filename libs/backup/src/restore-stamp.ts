import { createAuditTrail, type Clock, type StoredAuditEntry } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import type { BackupManifest } from './backup-manifest.ts';

/** The audit log as the audit trail opens it (the same name and indexes). */
const auditLog = (store: Store) =>
  store.log<StoredAuditEntry>('audit', { indexes: ['category', 'identity', 'timestamp'] });

/** The audit chain's length and tip hash in a snapshot file: what the archive proves was recorded. */
export async function readChain(file: string): Promise<NonNullable<BackupManifest['audit']>> {
  const store = await openEmbeddedStore({ path: file });
  try {
    const log = auditLog(store);
    const [count, tip] = await Promise.all([log.count(), log.tip()]);
    return { entry_count: count, tip_hash: tip === null ? null : String(tip.hash) };
  } finally {
    await store.close();
  }
}

export interface RestoreEntry {
  identity: string;
  role: string;
  id: string;
  scope: string;
  restoredAt: string;
}

/**
 * Appends the restore's own entry to the chain of the snapshot about to be restored (a full
 * restore replaces the live chain with it). Its metadata names the live chain it replaces (entry
 * count and tip hash), so that an auditor can tie the checkpoints of the old chain to this restore.
 * Returns the restored chain's length, this entry included (null with audit disabled).
 */
export async function stampRestore(
  file: string,
  live: Store,
  clock: Clock,
  enabled: boolean,
  entry: RestoreEntry,
  manifest: BackupManifest,
): Promise<number | null> {
  const liveLog = auditLog(live);
  const [previousCount, previousTip] = await Promise.all([liveLog.count(), liveLog.tip()]);
  const store = await openEmbeddedStore({ path: file });
  try {
    const trail = createAuditTrail({ store, clock, enabled });
    await trail.record({
      category: 'system',
      identity: entry.identity,
      role: entry.role,
      action: 'backup.restore',
      target: entry.id,
      result: 'success',
      metadata: {
        scope: entry.scope,
        archive_created_at: manifest.created_at,
        previous_entry_count: previousCount,
        previous_tip_hash: previousTip === null ? null : String(previousTip.hash),
      },
    });
    return enabled ? await auditLog(store).count() : null;
  } finally {
    await store.close();
  }
}
