import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { fixedClock } from '../time/clock.ts';
import {
  AUTH_FAILURES_COLLECTION,
  createAuthBackoff,
  type AuthBackoff,
  type AuthBackoffSettings,
  type AuthFailureRecord,
} from './auth-backoff.ts';

const CLIENT = '203.0.113.7';

let dir: string;
let store: Store;
let clock: ReturnType<typeof fixedClock>;
let settings: AuthBackoffSettings;
let backoff: AuthBackoff;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-backoff-'));
  clock = fixedClock('2030-01-01T00:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: clock.now });
  settings = { base_backoff_secs: 1, max_backoff_secs: 300, max_failed_attempts: 3 };
  backoff = createAuthBackoff({ store, clock, settings: () => settings });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function fail(times: number): Promise<number[]> {
  const lockouts: number[] = [];
  for (let i = 0; i < times; i++) lockouts.push(await backoff.recordFailure(CLIENT));
  return lockouts;
}

describe('AuthBackoff', () => {
  it('lets the first max_failed_attempts failures through, then doubles the lockout up to the cap', async () => {
    expect(await fail(3)).toEqual([0, 0, 0]);
    expect(await backoff.lockedFor(CLIENT)).toBe(0);
    expect(await fail(11)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
    expect(await backoff.lockedFor(CLIENT)).toBe(300);
  });

  it('counts the lockout down with the clock and ends it', async () => {
    await fail(5);
    expect(await backoff.lockedFor(CLIENT)).toBe(2);
    clock.advance(1_500);
    expect(await backoff.lockedFor(CLIENT)).toBe(1);
    clock.advance(500);
    expect(await backoff.lockedFor(CLIENT)).toBe(0);
  });

  it('keeps clients apart', async () => {
    await fail(4);
    expect(await backoff.lockedFor(CLIENT)).toBe(1);
    expect(await backoff.lockedFor('198.51.100.1')).toBe(0);
    expect(await backoff.recordFailure('198.51.100.1')).toBe(0);
  });

  it('keeps the failures of another surface (its own collection) apart', async () => {
    await fail(4);
    const registry = createAuthBackoff({ store, clock, settings: () => settings, collection: 'registry_auth_failures' });
    expect(await registry.lockedFor(CLIENT)).toBe(0);
    expect(await registry.recordFailure(CLIENT)).toBe(0);
    expect(await backoff.lockedFor(CLIENT)).toBe(1);
  });

  it('forgets failures once max_backoff_secs passed since the last one', async () => {
    await fail(3);
    clock.advance(300_000);
    expect(await backoff.recordFailure(CLIENT)).toBe(1);
    clock.advance(300_001);
    expect(await fail(4)).toEqual([0, 0, 0, 1]);
  });

  it('reads the settings on every call, so a config reload applies at once', async () => {
    await fail(3);
    settings = { base_backoff_secs: 10, max_backoff_secs: 15, max_failed_attempts: 1 };
    expect(await fail(2)).toEqual([15, 15]);
  });

  it('counts 20 parallel failures exactly', async () => {
    settings = { base_backoff_secs: 1, max_backoff_secs: 300, max_failed_attempts: 10 };
    const lockouts = await Promise.all(Array.from({ length: 20 }, () => backoff.recordFailure(CLIENT)));
    const stored = await store.collection<AuthFailureRecord>(AUTH_FAILURES_COLLECTION).get(CLIENT);
    expect(stored?.doc.failures).toBe(20);
    expect(lockouts.sort((a, b) => a - b)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300]);
  });
});
