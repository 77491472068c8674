import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { PrivateTargetError } from '@agent-platform/net';
import { TokenRejectedError } from './token-rejected.ts';

export type KeySet = ReturnType<typeof createLocalJWKSet>;

export interface KeySetCacheOptions {
  /** Fetches the issuer's current JWKS document (discovery included). */
  load: () => Promise<unknown>;
  /** How long a fetched set is used before the next token fetches it again (`jwks_cache_ttl_secs`), cooldown or not. */
  ttlMs: number;
  /**
   * The least time between two fetch attempts made because of a token: a token naming an unknown
   * `kid`, or any token while the endpoint is failing. It caps what a flood of forged tokens can
   * make us fetch at one request per cooldown (plus the one per TTL). It never delays the TTL
   * refresh of a working endpoint: a removed key must stop working at the TTL.
   */
  cooldownMs: number;
  now: () => number;
  /** Names the issuer in messages. */
  issuer: string;
}

export interface KeySetCache {
  /**
   * The set to verify with: the cached one while younger than the TTL, else fetched again (the
   * stale one kept if that fails; after a failure, not tried again before the cooldown).
   */
  current(): Promise<KeySet>;
  /** Fetches again for a token whose key the set lacks; null while cooling down, or when the fetch failed. */
  refresh(): Promise<KeySet | null>;
}

/**
 * One issuer's JWKS, cached. Concurrent callers share one fetch in flight. A failed fetch keeps
 * the last good set (an issuer briefly down does not lock everyone out) and is not retried
 * before the cooldown has passed.
 */
export function createKeySetCache(options: KeySetCacheOptions): KeySetCache {
  let cached: { set: KeySet; loadedAt: number } | null = null;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let lastError: unknown = null;
  let pending: Promise<KeySet> | null = null;

  function load(): Promise<KeySet> {
    if (pending !== null) return pending;
    lastAttempt = options.now();
    pending = (async () => {
      try {
        const set = createLocalJWKSet((await options.load()) as JSONWebKeySet);
        cached = { set, loadedAt: options.now() };
        lastError = null;
        return set;
      } catch (error) {
        lastError = error;
        throw error;
      } finally {
        pending = null;
      }
    })();
    return pending;
  }

  const unavailable = (cause: unknown) => {
    // A refusal by the private-target guard will not pass by itself: say so, and how to lift it.
    const refused = privateTargetRefusal(cause);
    return new TokenRejectedError(
      'keys_unavailable',
      refused === null
        ? `the signing keys of issuer ${options.issuer} are unavailable; try again later`
        : `the signing keys of issuer ${options.issuer} cannot be fetched: ${refused.message}`,
      { cause },
    );
  };

  return {
    async current() {
      if (cached !== null && options.now() - cached.loadedAt < options.ttlMs) return cached.set;
      // Expired: fetched again now, whatever the cooldown, so that a key the issuer removed stops
      // working at the TTL. Only while the endpoint is failing does the cooldown space the retries.
      const coolingDown = pending === null && lastError !== null && options.now() - lastAttempt < options.cooldownMs;
      if (coolingDown) {
        if (cached !== null) return cached.set;
        throw unavailable(lastError);
      }
      try {
        return await load();
      } catch (error) {
        if (cached !== null) return cached.set;
        throw unavailable(error);
      }
    },

    async refresh() {
      if (pending === null && options.now() - lastAttempt < options.cooldownMs) return null;
      try {
        return await load();
      } catch {
        return null;
      }
    },
  };
}

/** The PrivateTargetError in an error's cause chain, if any. */
function privateTargetRefusal(error: unknown): PrivateTargetError | null {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth += 1) {
    if (at instanceof PrivateTargetError) return at;
  }
  return null;
}
