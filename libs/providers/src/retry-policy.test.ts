import { describe, expect, it } from 'vitest';
import { backoffDelayMs, isRetryableStatus, retryAfterMs, type RetryPolicy } from './retry-policy.ts';

const policy: RetryPolicy = { max_attempts: 10, base_delay_ms: 1000, max_delay_ms: 60_000, max_total_ms: 300_000 };

describe('retry policy', () => {
  it('doubles from the base, caps at the max, and keeps at least half of each step', () => {
    expect([1, 2, 3, 7, 8, 20].map((n) => backoffDelayMs(policy, n, undefined, () => 1))).toEqual([1000, 2000, 4000, 60_000, 60_000, 60_000]);
    expect([1, 2, 3, 8].map((n) => backoffDelayMs(policy, n, undefined, () => 0))).toEqual([500, 1000, 2000, 30_000]);
  });

  it('uses a retry-after as a floor, even above the max delay', () => {
    expect(backoffDelayMs(policy, 1, 7000, () => 0)).toBe(7000);
    expect(backoffDelayMs(policy, 8, 120_000, () => 1)).toBe(120_000);
    expect(backoffDelayMs(policy, 3, 10, () => 1)).toBe(4000);
  });

  it('reads retry-after-ms, retry-after seconds and retry-after dates', () => {
    const now = Date.parse('2025-03-01T12:00:00Z');
    expect(retryAfterMs({ 'retry-after-ms': '1500', 'retry-after': '9' }, now)).toBe(1500);
    expect(retryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': '0.5' }, now)).toBe(500);
    expect(retryAfterMs({ 'retry-after': 'Sat, 01 Mar 2025 12:00:30 GMT' }, now)).toBe(30_000);
    expect(retryAfterMs({ 'retry-after': 'Sat, 01 Mar 2025 11:00:00 GMT' }, now)).toBe(0);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({}, now)).toBeUndefined();
  });

  it('retries overload, rate limits and server errors, not other client errors', () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) expect(isRetryableStatus(status, {}), String(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 422]) expect(isRetryableStatus(status, {}), String(status)).toBe(false);
    expect(isRetryableStatus(503, { 'x-should-retry': 'false' })).toBe(false);
    expect(isRetryableStatus(400, { 'x-should-retry': 'true' })).toBe(true);
  });
});
