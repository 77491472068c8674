import { StoreConflictError, StoreDuplicateError, type Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';

/**
 * Backoff after failed authentication attempts (`[auth.rate_limit]`), per client address. State
 * lives in the shared store so that every api node sees the same lockouts. Only failed attempts
 * are throttled: a valid credential is never refused, so nothing here is read or written for a
 * successful request, and a success does not reset the count (clients sharing an address, e.g.
 * behind an untrusted proxy, cannot clear each other's failures).
 */
export interface AuthBackoff {
  /** Seconds the client must still wait before a failed attempt is answered 401 again, or 0. */
  lockedFor(client: string): Promise<number>;
  /** Records a failure; returns the lockout (seconds) it caused, 0 when none. */
  recordFailure(client: string): Promise<number>;
}

/** Failure state of one client address in the `auth_failures` collection. */
export interface AuthFailureRecord {
  /** The client address. */
  id: string;
  /** Consecutive failures not yet forgotten. */
  failures: number;
  last_failure_at: string;
  /** When the current lockout ends; null while the client is within its free attempts. */
  locked_until: string | null;
  /**
   * Store TTL: just after the failures would be forgotten anyway (and any lockout is over), so
   * that addresses which never succeed do not pile up. Correctness never depends on the purge.
   */
  purge_at: string;
}

export const AUTH_FAILURES_COLLECTION = 'auth_failures';

/** `[auth.rate_limit]`, read on every call so that a config reload applies at once. */
export interface AuthBackoffSettings {
  base_backoff_secs: number;
  max_backoff_secs: number;
  max_failed_attempts: number;
}

export interface AuthBackoffDeps {
  store: Store;
  clock: Clock;
  settings: () => AuthBackoffSettings;
  /** Where the failures are counted; `auth_failures` (the api's) unless another surface keeps its own (the registry: `registry_auth_failures`). */
  collection?: string;
}

/** Concurrent failures of one client retry their write this often before giving up. */
const MAX_WRITE_ATTEMPTS = 100;

/**
 * Backoff over the store port. Semantics (docs/permissions.md "Failed attempts and lockouts"):
 * - the first `max_failed_attempts` consecutive failures of a client are free;
 * - the n-th failure beyond them locks the client out for `min(base * 2^(n-1), max)` seconds:
 *   its failed attempts are answered 429 meanwhile, its valid ones served as usual;
 * - a failure more than `max_backoff_secs` after the previous one starts a fresh count (old
 *   failures are forgotten).
 * Each failure is a read-modify-write with a version check, retried on conflict, so that
 * parallel failures (possibly on different api nodes) are each counted exactly once.
 */
export function createAuthBackoff(deps: AuthBackoffDeps): AuthBackoff {
  const failures = deps.store.collection<AuthFailureRecord>(deps.collection ?? AUTH_FAILURES_COLLECTION, { ttlField: 'purge_at' });

  return {
    async lockedFor(client: string): Promise<number> {
      const lockedUntil = (await failures.get(client))?.doc.locked_until ?? null;
      if (lockedUntil === null) return 0;
      const remainingMs = Date.parse(lockedUntil) - deps.clock.now().getTime();
      return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : 0;
    },

    async recordFailure(client: string): Promise<number> {
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        const current = await failures.get(client);
        const now = deps.clock.now();
        const next = nextFailureState(client, current?.doc ?? null, now, deps.settings());
        try {
          if (current === null) await failures.insert(next.record);
          else await failures.replace(next.record, current.version);
          return next.lockoutSecs;
        } catch (error) {
          if (!(error instanceof StoreConflictError) && !(error instanceof StoreDuplicateError)) throw error;
        }
      }
      throw Errors.unavailable('authentication backoff state');
    },
  };
}

/** The state after one more failure; pure, so a retried write recomputes it from fresh state. */
function nextFailureState(
  client: string,
  previous: AuthFailureRecord | null,
  now: Date,
  settings: AuthBackoffSettings,
): { record: AuthFailureRecord; lockoutSecs: number } {
  const forgetAfterMs = settings.max_backoff_secs * 1000;
  const stale = previous !== null && now.getTime() - Date.parse(previous.last_failure_at) > forgetAfterMs;
  const count = (previous === null || stale ? 0 : previous.failures) + 1;
  const beyond = count - settings.max_failed_attempts;
  // Exponent capped so that a long-running attacker cannot push 2^n to Infinity.
  const lockoutSecs =
    beyond > 0 ? Math.min(settings.base_backoff_secs * 2 ** Math.min(beyond - 1, 52), settings.max_backoff_secs) : 0;
  return {
    record: {
      id: client,
      failures: count,
      last_failure_at: now.toISOString(),
      locked_until: lockoutSecs > 0 ? new Date(now.getTime() + lockoutSecs * 1000).toISOString() : null,
      purge_at: new Date(now.getTime() + forgetAfterMs + 1000).toISOString(),
    },
    lockoutSecs,
  };
}
