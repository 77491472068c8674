import { randomUUID } from 'node:crypto';
import type { Doc, Store } from '@agent-platform/store';

/**
 * The platform installation's id: a UUID kept in the store (collection `platform_installation`),
 * made by the first backup. Backups carry it, so a restore can tell this installation's archives
 * from another's; a full restore brings it along, so a platform restored into a new data dir is the
 * same installation as the one backed up.
 */
const COLLECTION = 'platform_installation';
const ID = 'installation';

interface InstallationRecord extends Doc {
  installation_id: string;
  created_at: string;
}

/** The id, made now if the store has none (atomic: concurrent callers agree). */
export async function ensureInstallationId(store: Store, now: () => Date): Promise<string> {
  const stored = await store
    .collection<InstallationRecord>(COLLECTION)
    .update(ID, (current) =>
      current === null ? { id: ID, installation_id: randomUUID(), created_at: now().toISOString() } : null,
    );
  return stored!.doc.installation_id;
}

/** The id, or null for a store that never made a backup. */
export async function installationIdOf(store: Store): Promise<string | null> {
  return (await store.collection<InstallationRecord>(COLLECTION).get(ID))?.doc.installation_id ?? null;
}
