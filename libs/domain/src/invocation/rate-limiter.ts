import type { Counters } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';

/** Per-agent invocation rate limit (spec §Errors RateLimited 429; the value is ours, docs/invocation.md). */
export interface RateLimiter {
  /** Takes one invocation from the agent's budget for this minute, or throws `RateLimited`. */
  take(agentId: string): Promise<void>;
}

const WINDOW_MS = 60_000;
/** A window's counter outlives the window by this much (clock skew between nodes), then expires. */
const EXPIRY_GRACE_MS = 60_000;

/**
 * A fixed window per clock minute in the store's atomic counters (`ratelimit:agent:<id>:<minute>`),
 * so every api node and worker sharing the store shares one budget, and `add` with a `limit`
 * never lets parallel callers past it. A refused call takes nothing. Retry-After is the number
 * of seconds until the window ends. A fixed window lets a burst of up to twice the limit through
 * across a minute boundary; that is accepted for a guard against runaway callers.
 *
 * Each window's counter expires a minute after the window ends, so the store keeps only the
 * current windows, however many agents and minutes there were (issue "Hardening" 10).
 */
export function createRateLimiter(deps: { counters: Counters; clock: Clock; limitPerMinute: () => number }): RateLimiter {
  return {
    async take(agentId) {
      const now = deps.clock.now().getTime();
      const window = Math.floor(now / WINDOW_MS);
      const limit = deps.limitPerMinute();
      const expiresAt = new Date((window + 1) * WINDOW_MS + EXPIRY_GRACE_MS).toISOString();
      const { applied } = await deps.counters.add(`ratelimit:agent:${agentId}:${window}`, 1, { limit, expiresAt });
      if (applied) return;
      const retryAfter = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
      throw Errors.rateLimited(`agent '${agentId}' accepts at most ${limit} invocations per minute: retry in ${retryAfter} s`, retryAfter, {
        agent_id: agentId,
        limit_per_minute: limit,
      });
    },
  };
}
