import type { IncomingHttpHeaders } from 'node:http';

/** `[model_calls]` llm_retry_* in milliseconds (spec §Limits "Provider retry"). */
export interface RetryPolicy {
  /** Attempts per call, the first included. */
  max_attempts: number;
  base_delay_ms: number;
  max_delay_ms: number;
  /** No retry starts once its wait would end later than this after the first attempt began. */
  max_total_ms: number;
}

/**
 * Statuses worth another attempt: the rule of the official OpenAI client (408, 409, 429 and every
 * 5xx, which covers 502/503/504 and Anthropic-style 529 "overloaded"), so that a platform and the
 * client library behave alike behind the same server. `x-should-retry` from the server overrides.
 */
export function isRetryableStatus(status: number, headers: IncomingHttpHeaders): boolean {
  const hint = headerValue(headers, 'x-should-retry');
  if (hint === 'true') return true;
  if (hint === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait the server asked for, in ms: `retry-after-ms`, else `retry-after` as seconds or as an
 * HTTP date (relative to `nowMs`, wall-clock). Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: IncomingHttpHeaders, nowMs: number): number | undefined {
  const ms = Number(headerValue(headers, 'retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const text = headerValue(headers, 'retry-after');
  if (text === undefined || text.trim() === '') return undefined;
  const secs = Number(text);
  if (Number.isFinite(secs)) return secs >= 0 ? secs * 1000 : undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * The wait before retry number `retry` (1 = the first retry): exponential from `base_delay_ms`,
 * capped at `max_delay_ms`, with "equal jitter" (half fixed, half random) so that many clients
 * hit by the same outage spread out without any of them retrying at once. The server's
 * retry-after is a floor (spec §Limits), so it wins over the cap too.
 */
export function backoffDelayMs(policy: RetryPolicy, retry: number, floorMs: number | undefined, random: () => number): number {
  const exponential = Math.min(policy.max_delay_ms, policy.base_delay_ms * 2 ** Math.min(retry - 1, 30));
  const jittered = exponential / 2 + (random() * exponential) / 2;
  return Math.ceil(Math.max(jittered, floorMs ?? 0));
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
