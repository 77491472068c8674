import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrafficDecision } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGatewayTraffic } from './gateway-traffic.ts';

const decision = (id: string, at: string): TrafficDecision => ({
  id,
  at,
  finished_at: null,
  correlation_id: `corr-${id}`,
  agent_id: 'agent-1',
  identity: 'key:ops',
  requested_provider: 'local',
  requested_model: 'echo',
  provider: 'local',
  model: 'echo',
  pii_detected: false,
  categories: {},
  count: 0,
  local_eligible: true,
  forced_local: false,
  rerouted: false,
  tokenised: false,
  hydrated: false,
  restored: 0,
  outcome: 'pending',
});

describe('gateway traffic: a decision written pending, then settled', () => {
  let dir: string;
  let store: Store;
  let nowMs: number;
  const now = () => new Date(nowMs);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'traffic-'));
    nowMs = Date.parse('2026-12-01T10:00:00.000Z');
    store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: now });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('settles with what begin wrote: the outcome over the pending row, nothing else lost', async () => {
    const traffic = createGatewayTraffic(store, now);
    const begun = await traffic.begin(decision('d1', now().toISOString()), 24);
    expect((await traffic.recent(5)).map((d) => d.outcome)).toEqual(['pending']);
    await traffic.settle('d1', { outcome: 'ok', finished_at: '2026-12-01T10:00:01.000Z', hydrated: true }, begun);
    const [settled] = await traffic.recent(5);
    expect(settled).toEqual({
      ...decision('d1', now().toISOString()),
      outcome: 'ok',
      finished_at: '2026-12-01T10:00:01.000Z',
      hydrated: true,
    });
  });

  it('keeps a change another process made to the row since begin (settled from the row as it is now)', async () => {
    const traffic = createGatewayTraffic(store, now);
    const begun = await traffic.begin(decision('d1', now().toISOString()), 24);
    // Another writer (another process of a fleet) rewrote the row since: the version moved.
    await traffic.settle('d1', { count: 3, tokenised: true });
    await traffic.settle('d1', { outcome: 'failed', finished_at: '2026-12-01T10:00:02.000Z' }, begun);
    const [settled] = await traffic.recent(5);
    expect(settled).toMatchObject({ count: 3, tokenised: true, outcome: 'failed', finished_at: '2026-12-01T10:00:02.000Z' });
  });

  it('leaves a decision absent when it expired before its settle, or was never written', async () => {
    const traffic = createGatewayTraffic(store, now);
    const begun = await traffic.begin(decision('d1', now().toISOString()), 1);
    nowMs += 2 * 3_600_000;
    await traffic.settle('d1', { outcome: 'ok' }, begun);
    await traffic.settle('never', { outcome: 'ok' });
    expect(await traffic.recent(5)).toEqual([]);
  });
});
