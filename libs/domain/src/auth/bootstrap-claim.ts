import { StoreDuplicateError, type Store } from '@agent-platform/store';
import type { Clock } from '../time/clock.ts';

/** The one-shot claim on the key store's bootstrap (collection `bootstrap_claims`). */
interface BootstrapClaimRecord {
  id: string;
  claimed_at: string;
  /**
   * TTL while the claimant creates the first key: one that crashed first frees the bootstrap
   * again after this. Null once a key exists: the bootstrap is then closed for good.
   */
  expires_at: string | null;
}

const BOOTSTRAP_CLAIMS = 'bootstrap_claims';
/** The api's claim; another key store (the registry's) names its own, so that the two bootstraps never meet. */
const CLAIM_ID = 'first-key';
/** Long enough for one key creation; short enough that a crashed claimant does not lock anyone out for long. */
const CLAIM_TTL_MS = 30_000;

/** A held claim on the first key. */
export interface BootstrapClaim {
  /** The first key exists: the claim never expires, so no later bootstrap can ever pass. */
  close(): Promise<void>;
  /** The key could not be created (a refused body): the bootstrap is free again. */
  release(): Promise<void>;
}

/**
 * Spec §Authentication rule 3 lets one request create the first key without a credential while
 * the key store is empty. Emptiness is first judged when the request's headers arrive, but its
 * body (and so the key creation) may come much later: `bootstrapFirstKey` decides again, at
 * creation time. Of concurrent bootstraps (on one api node or several), exactly one holds the
 * claim, one `insert` of a fixed id in the shared store; it then checks the store is still empty
 * (a key may have been created another way, or by a bootstrap whose claim has since been closed
 * or expired), creates the key and closes the bootstrap for good. So the spec's "known race" of
 * two first keys cannot happen here (docs/permissions.md "Bootstrap rule").
 */
export async function claimBootstrap(deps: { store: Store; clock: Clock }, claimId: string = CLAIM_ID): Promise<BootstrapClaim | null> {
  const claims = deps.store.collection<BootstrapClaimRecord>(BOOTSTRAP_CLAIMS, { ttlField: 'expires_at' });
  const now = deps.clock.now();
  const record: BootstrapClaimRecord = {
    id: claimId,
    claimed_at: now.toISOString(),
    expires_at: new Date(now.getTime() + CLAIM_TTL_MS).toISOString(),
  };
  try {
    await claims.insert(record);
  } catch (error) {
    if (error instanceof StoreDuplicateError) return null;
    throw error;
  }
  return {
    close: async () => void (await claims.upsert({ ...record, expires_at: null })),
    release: async () => void (await claims.delete(claimId)),
  };
}

/**
 * Creates the first key if, holding the claim, the key store is still empty; null when the
 * bootstrap is not (or no longer) open, which the caller answers 401.
 */
export async function bootstrapFirstKey<K>(
  deps: { store: Store; clock: Clock; keys: { isEmpty(): Promise<boolean> } },
  create: () => Promise<K>,
  claimId: string = CLAIM_ID,
): Promise<K | null> {
  const claim = await claimBootstrap(deps, claimId);
  if (claim === null) return null;
  let created: K;
  try {
    if (!(await deps.keys.isEmpty())) {
      await claim.close();
      return null;
    }
    created = await create();
  } catch (error) {
    await claim.release();
    throw error;
  }
  await claim.close();
  return created;
}
