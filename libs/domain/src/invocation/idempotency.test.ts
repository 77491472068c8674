import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvocationOutcome } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../time/clock.ts';
import { createIdempotencyKeys, type IdempotencyKeys } from './idempotency.ts';

let dir: string;
let store: Store;
let keys: IdempotencyKeys;
const clock = fixedClock('2026-11-10T12:00:00.000Z');

const result = (content: string): InvocationOutcome => ({
  content,
  tokens_used: 2,
  duration_ms: 1,
  correlation_id: 'c1',
  source: 'Api',
  tool_calls: [],
  usage: { input_tokens: 1, output_tokens: 1 },
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-idem-'));
  clock.set('2026-11-10T12:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'p.db'), clock: clock.now });
  keys = createIdempotencyKeys({ store, clock, ttlHours: () => 24, pendingLeaseMs: () => 60_000, pollMs: 2 });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('idempotency keys', () => {
  it('gives one owner among concurrent claims; the others get its result once it completes', async () => {
    const claims = Array.from({ length: 20 }, () => keys.claim('agent-a', 'k1', { waitMs: 5_000 }));
    const first = await Promise.race(claims);
    expect(first.kind).toBe('owner');
    if (first.kind === 'owner') await first.complete(result('hello'));
    const all = await Promise.all(claims);
    expect(all.filter((c) => c.kind === 'owner')).toHaveLength(1);
    expect(all.filter((c) => c.kind === 'duplicate').map((c) => (c.kind === 'duplicate' ? c.result.content : ''))).toEqual(Array(19).fill('hello'));
  });

  it('scopes keys per agent', async () => {
    const a = await keys.claim('agent-a', 'k1', { waitMs: 100 });
    const b = await keys.claim('agent-b', 'k1', { waitMs: 100 });
    expect([a.kind, b.kind]).toEqual(['owner', 'owner']);
  });

  it('forgets a released key, so a retry runs', async () => {
    const owner = await keys.claim('agent-a', 'k1', { waitMs: 100 });
    if (owner.kind === 'owner') await owner.release();
    expect((await keys.claim('agent-a', 'k1', { waitMs: 100 })).kind).toBe('owner');
  });

  it('remembers a result for the TTL and no longer', async () => {
    const owner = await keys.claim('agent-a', 'k1', { waitMs: 100 });
    if (owner.kind === 'owner') await owner.complete(result('first'));
    clock.advance(23 * 3_600_000);
    expect(await keys.claim('agent-a', 'k1', { waitMs: 100 })).toMatchObject({ kind: 'duplicate', result: { content: 'first' } });
    clock.advance(2 * 3_600_000);
    expect((await keys.claim('agent-a', 'k1', { waitMs: 100 })).kind).toBe('owner');
  });

  it('frees a pending key whose owner died once its lease ends, and times out a waiter before that', async () => {
    await keys.claim('agent-a', 'k1', { waitMs: 100 });
    await expect(keys.claim('agent-a', 'k1', { waitMs: 20 })).rejects.toMatchObject({ category: 'Timeout' });
    clock.advance(61_000);
    expect((await keys.claim('agent-a', 'k1', { waitMs: 100 })).kind).toBe('owner');
  });
});
