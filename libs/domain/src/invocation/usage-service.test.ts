import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Licence, LicenceState } from '../licence/licence.ts';
import { fixedClock } from '../time/clock.ts';
import { recordUsageEvent, type UsageEvent } from './usage-events.ts';
import { createUsageService, mondayOf } from './usage-service.ts';
import { valueClassOf } from './value-class.ts';

// Wednesday.
const NOW = '2026-11-18T10:00:00.000Z';
let dir: string;
let store: Store;
const clock = fixedClock(NOW);
let state: LicenceState;

const licence: Licence = {
  carrier_name: 'Acme',
  carrier_id: 'acme',
  iat: 0,
  exp: Date.parse('2027-01-01T00:00:00Z') / 1000,
  period_start: '2026-11-01T00:00:00Z',
  period_end: '2026-12-01T00:00:00Z',
  providers: { local: true, managed_cloud: true },
};

function event(at: string, overrides: Partial<UsageEvent> = {}): UsageEvent {
  const workflow_type = overrides.workflow_type === undefined ? 'claims_intake' : overrides.workflow_type;
  return {
    at,
    agent_id: 'a1',
    provider_id: 'oa',
    model: 'm',
    input_tokens: 10,
    output_tokens: 5,
    model_calls: 1,
    cost_usd: 0.25,
    source: 'Api',
    ...overrides,
    workflow_type,
    value_class: workflow_type === null ? null : valueClassOf(workflow_type),
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-usage-'));
  store = await openEmbeddedStore({ path: join(dir, 'p.db'), clock: clock.now });
  state = { kind: 'loaded', licence };
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('mondayOf', () => {
  it.each([
    ['2026-11-18T10:00:00.000Z', '2026-11-16T00:00:00.000Z'],
    ['2026-11-16T00:00:00.000Z', '2026-11-16T00:00:00.000Z'],
    ['2026-11-22T23:59:59.999Z', '2026-11-16T00:00:00.000Z'],
  ])('%s -> %s', (t, monday) => {
    expect(mondayOf(new Date(t)).toISOString()).toBe(monday);
  });
});

describe('usage service', () => {
  it('sums the licence period only, and everything for the summary', async () => {
    await recordUsageEvent(store, event('2026-10-31T23:59:59.000Z'));
    await recordUsageEvent(store, event('2026-11-02T00:00:00.000Z', { input_tokens: 7, output_tokens: 3, model_calls: 2, cost_usd: 0.1 }));
    await recordUsageEvent(store, event('2026-11-17T00:00:00.000Z', { cost_usd: 0.2 }));
    await recordUsageEvent(store, event('2026-12-01T00:00:00.000Z'));
    const usage = createUsageService({ store, clock, licence: () => state });
    expect(await usage.usage()).toEqual({ total_input_tokens: 17, total_output_tokens: 8, total_requests: 3, total_cost_usd: 0.3 });
    expect(await usage.summary()).toEqual({ period: 'all_time', input_tokens: 37, output_tokens: 18, requests: 5, cost_usd: 0.8 });
    state = { kind: 'none', reason: 'no file' };
    expect(await usage.usage()).toEqual({ total_input_tokens: 0, total_output_tokens: 0, total_requests: 0, total_cost_usd: 0 });
  });

  it('counts value events by class, by solution and by week', async () => {
    await recordUsageEvent(store, event('2026-11-18T09:00:00.000Z'));
    await recordUsageEvent(store, event('2026-11-16T00:00:00.000Z', { workflow_type: 'subrogation' }));
    await recordUsageEvent(store, event('2026-11-15T23:59:59.000Z', { workflow_type: 'marketing' }));
    await recordUsageEvent(store, event('2026-11-04T12:00:00.000Z', { workflow_type: 'kyc_check' }));
    await recordUsageEvent(store, event('2026-11-17T12:00:00.000Z', { workflow_type: null }));
    const usage = createUsageService({ store, clock, licence: () => state });
    // A 7-day window from Wednesday 10:00 back to the previous Wednesday 10:00.
    expect(await usage.valueEvents({ window: 7 * 86_400, weeks: 3 })).toEqual({
      window_secs: 604_800,
      since: '2026-11-11T10:00:00.000Z',
      until: NOW,
      total: 3,
      by_class: { intake: 1, servicing: 0, recovery: 1, underwriting: 0, compliance: 0 },
      by_solution: { claims_intake: 1, subrogation: 1, marketing: 1 },
      weekly: [
        { week_start: '2026-11-02T00:00:00.000Z', count: 1 },
        { week_start: '2026-11-09T00:00:00.000Z', count: 1 },
        { week_start: '2026-11-16T00:00:00.000Z', count: 2 },
      ],
    });
  });
});
