import type { PackageRevocation } from '@agent-platform/contracts';
import type { Collection, Store } from '@agent-platform/store';
import type { RevokedPackage } from '../errors/errors.ts';

/**
 * What a platform remembers of a registry's revocation feed (docs/catalog.md "Revocations").
 * Independent of what is installed: a revoked version that is not installed is remembered too, so
 * that installing it later is refused.
 */
export interface RevocationRecord {
  /** `<name>@<version>`. */
  id: string;
  name: string;
  version: string;
  reason: string;
  /** When the registry yanked it. */
  revoked_at: string;
  /** Position on the feed; a later revocation of the same name@version replaces this one. */
  seq: number;
  /** The registry signing key that signed the feed carrying it. */
  key_id: string;
  /** When this platform first recorded it. */
  recorded_at: string;
  /** An operator's override: install and activation allowed again. */
  override: { reason: string; by: string; at: string } | null;
}

/**
 * One feed entry being applied, claimed in the store by `<key_id>:<seq>` so that in a fleet of
 * api nodes exactly one applies it (one audit entry, one event). `applying` holds a lease: a node
 * that died mid-way leaves it to the next one whose poll finds it expired.
 */
export interface RevocationClaim {
  id: string;
  name: string;
  version: string;
  seq: number;
  key_id: string;
  status: 'applying' | 'done';
  /** A random token of the applier holding it. */
  owner: string;
  lease_until: string;
  claimed_at: string;
  done_at: string | null;
  agents_suspended: string[];
  workflows_drained: string[];
}

/** How far a platform has read the feed signed by one registry key. */
export interface RevocationCursor {
  /** The registry key id. */
  id: string;
  seq: number;
  updated_at: string;
}

export const REVOCATION_COLLECTIONS = {
  revocations: 'catalog_revocations',
  claims: 'catalog_revocation_claims',
  cursors: 'catalog_revocation_cursors',
} as const;

export interface RevocationCollections {
  revocations: Collection<RevocationRecord>;
  claims: Collection<RevocationClaim>;
  cursors: Collection<RevocationCursor>;
}

export function revocationCollections(store: Store): RevocationCollections {
  return {
    revocations: store.collection<RevocationRecord>(REVOCATION_COLLECTIONS.revocations, { indexes: [{ field: 'name' }] }),
    claims: store.collection<RevocationClaim>(REVOCATION_COLLECTIONS.claims),
    cursors: store.collection<RevocationCursor>(REVOCATION_COLLECTIONS.cursors),
  };
}

export const revocationId = (name: string, version: string): string => `${name}@${version}`;

/** The revocation of name@version that still refuses installs and activations, or null. */
export async function standingRevocation(store: Store, name: string, version: string): Promise<RevocationRecord | null> {
  const found = (await revocationCollections(store).revocations.get(revocationId(name, version)))?.doc ?? null;
  return found !== null && found.override === null ? found : null;
}

/** The wire view (`InstalledPackage.revocation`). */
export function packageRevocationView(record: RevocationRecord): PackageRevocation {
  return { version: record.version, reason: record.reason, revoked_at: record.revoked_at, seq: record.seq, override: record.override };
}

export function revokedPackage(record: RevocationRecord): RevokedPackage {
  return { name: record.name, version: record.version, reason: record.reason, seq: record.seq };
}

/**
 * `revoked` and `revocation` of GET /catalog/installed, for each installed name@version: a
 * revocation of the installed version shows, overridden or not; one of another version does not
 * (an upgrade past a revoked version clears it).
 */
export async function revocationStatus(store: Store): Promise<(name: string, version: string) => { revoked: boolean; revocation: PackageRevocation | null }> {
  const rows = await revocationCollections(store).revocations.find();
  const byId = new Map(rows.map(({ doc }) => [doc.id, doc]));
  return (name, version) => {
    const found = byId.get(revocationId(name, version));
    return found === undefined ? { revoked: false, revocation: null } : { revoked: true, revocation: packageRevocationView(found) };
  };
}
