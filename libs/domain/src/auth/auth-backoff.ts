/**
 * Backoff after failed authentication attempts (`[auth.rate_limit]`), per client address. State
 * lives in the shared store so that every api node sees the same lockouts.
 */
export interface AuthBackoff {
  /** Seconds the client must still wait, or 0 when it may try now. */
  lockedFor(client: string): Promise<number>;
  /** Records a failure; returns the lockout (seconds) it caused, 0 when none. */
  recordFailure(client: string): Promise<number>;
  recordSuccess(client: string): Promise<void>;
}
