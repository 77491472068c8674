import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../time/clock.ts';
import { createRateLimiter } from './rate-limiter.ts';

let dir: string;
let store: Store;
const clock = fixedClock('2026-11-10T12:00:15.000Z');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-rate-'));
  clock.set('2026-11-10T12:00:15.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'p.db'), clock: clock.now });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('createRateLimiter', () => {
  it('lets exactly the limit through per minute, under concurrency, and says when to retry', async () => {
    const limiter = createRateLimiter({ counters: store.counters, clock, limitPerMinute: () => 5 });
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => limiter.take('a1')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({
      category: 'RateLimited',
      retryAfterSecs: 45,
      details: { agent_id: 'a1', limit_per_minute: 5, retry_after_secs: 45 },
    });
    // Another agent has its own budget.
    await expect(limiter.take('a2')).resolves.toBeUndefined();
    // The next minute starts afresh.
    clock.advance(45_000);
    await expect(limiter.take('a1')).resolves.toBeUndefined();
  });

  it('reads the limit per call, so a reload applies at once', async () => {
    let limit = 1;
    const limiter = createRateLimiter({ counters: store.counters, clock, limitPerMinute: () => limit });
    await limiter.take('a1');
    await expect(limiter.take('a1')).rejects.toMatchObject({ category: 'RateLimited' });
    limit = 2;
    await expect(limiter.take('a1')).resolves.toBeUndefined();
  });

  it('leaves nothing behind once a window is over (issue "Hardening" 10)', async () => {
    const limiter = createRateLimiter({ counters: store.counters, clock, limitPerMinute: () => 100 });
    for (const agent of ['a1', 'a2', 'a3']) await limiter.take(agent);
    expect(Object.keys(await store.counters.list('ratelimit:'))).toHaveLength(3);
    // Past the window and its grace, the windows are gone: nothing piles up per agent per minute.
    clock.advance(3 * 60_000);
    expect(await store.counters.list('ratelimit:')).toEqual({});
    await limiter.take('a1');
    expect(Object.keys(await store.counters.list('ratelimit:'))).toHaveLength(1);
  });
});
