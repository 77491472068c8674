import { StoreDuplicateError, type Store } from '@agent-platform/store';
import type { Clock } from '../time/clock.ts';

/** The one-shot claim on the key store's bootstrap (collection `bootstrap_claims`). */
interface BootstrapClaimRecord {
  id: string;
  claimed_at: string;
  /** TTL: a claimant that died before creating its key frees the bootstrap again after this. */
  expires_at: string;
}

const BOOTSTRAP_CLAIMS = 'bootstrap_claims';
const CLAIM_ID = 'first-key';
/** Long enough for one key creation; short enough that a crashed claimant does not lock anyone out for long. */
const CLAIM_TTL_MS = 30_000;

/** A held claim; `release` gives it back when the key could not be created (a refused body). */
export interface BootstrapClaim {
  release(): Promise<void>;
}

/**
 * Spec §Authentication rule 3 lets one request create the first key without a credential while
 * the key store is empty. Two such requests at once (on one api node or on two) would both see it
 * empty: this claim, one `insert` of a fixed id in the shared store, lets exactly one of them
 * through. The claim expires, so a claimant that crashed before creating its key does not block
 * the bootstrap forever; once a key exists, the store is no longer empty and no claim is asked for.
 */
export async function claimBootstrap(deps: { store: Store; clock: Clock }): Promise<BootstrapClaim | null> {
  const claims = deps.store.collection<BootstrapClaimRecord>(BOOTSTRAP_CLAIMS, { ttlField: 'expires_at' });
  const now = deps.clock.now();
  try {
    await claims.insert({
      id: CLAIM_ID,
      claimed_at: now.toISOString(),
      expires_at: new Date(now.getTime() + CLAIM_TTL_MS).toISOString(),
    });
    return { release: async () => void (await claims.delete(CLAIM_ID)) };
  } catch (error) {
    if (error instanceof StoreDuplicateError) return null;
    throw error;
  }
}
