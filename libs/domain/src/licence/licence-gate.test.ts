import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { PlatformError } from '../errors/platform-error.ts';
import { fixedClock } from '../time/clock.ts';
import type { Licence, LicenceState } from './licence.ts';
import { createLicenceGate, type LicenceGate } from './licence-gate.ts';

const DAY_SECS = 86_400;
const START = '2026-11-10T12:00:00.000Z';
const startSecs = Date.parse(START) / 1000;

function licence(overrides: Partial<Licence> = {}): Licence {
  return {
    carrier_name: 'Acme Mutual',
    carrier_id: 'acme-001',
    iat: startSecs - DAY_SECS,
    exp: startSecs + 30 * DAY_SECS,
    period_start: '2026-11-01T00:00:00Z',
    period_end: '2026-12-01T00:00:00Z',
    providers: { local: true, managed_cloud: false },
    ...overrides,
  };
}

let dir: string;
let dbPath: string;
let store: Store;
let clock: ReturnType<typeof fixedClock>;
let state: LicenceState;
let gate: LicenceGate;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-licence-gate-'));
  dbPath = join(dir, 'platform.db');
  clock = fixedClock(START);
  store = await openEmbeddedStore({ path: dbPath, clock: clock.now });
  state = { kind: 'loaded', licence: licence() };
  gate = createLicenceGate({ store, clock, state: () => state });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** The refusal of `authorize`, or a failure when it was allowed. */
async function refusal(request: Parameters<LicenceGate['authorize']>[0]): Promise<PlatformError> {
  try {
    await gate.authorize(request);
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error(`authorize(${JSON.stringify(request)}) was allowed`);
}

describe('LicenceGate: licence and provider', () => {
  it('refuses every call without a licence, naming the licence', async () => {
    state = { kind: 'none', reason: 'no [licence] file is configured' };
    const error = await refusal({ provider_id: 'local' });
    expect(error.category).toBe('PermissionDenied');
    expect(error.message).toMatch(/no valid licence.*no \[licence\] file is configured/);
    expect(error.details).toEqual({ reason: 'no_licence' });
  });

  it('refuses from the expiry instant on, and counts nothing', async () => {
    state = { kind: 'loaded', licence: licence({ exp: startSecs + 60, transaction_budgets: { claims_intake: 5 } }) };
    await (await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' })).commit({ cost_usd: 0 });
    clock.advance(60_000);
    const error = await refusal({ provider_id: 'local', workflow_type: 'claims_intake' });
    expect(error.details).toMatchObject({ reason: 'licence_expired' });
    expect(error.message).toContain('licence of Acme Mutual (acme-001) expired');
    expect((await gate.usage()).transactions).toEqual({ claims_intake: 1 });
  });

  it('allows local only with providers.local', async () => {
    await gate.authorize({ provider_id: 'local' });
    state = { kind: 'loaded', licence: licence({ providers: { local: false, managed_cloud: true } }) };
    expect((await refusal({ provider_id: 'local' })).details).toEqual({ reason: 'provider_not_licensed', provider_id: 'local' });
  });

  it('allows another provider when it has an entitlement or managed cloud is on', async () => {
    expect((await refusal({ provider_id: 'openai' })).message).toContain("does not allow provider 'openai'");
    state = { kind: 'loaded', licence: licence({ provider_entitlements: [{ provider_id: 'openai', budget_usd: 10 }] }) };
    await gate.authorize({ provider_id: 'openai' });
    expect((await refusal({ provider_id: 'vllm' })).details).toMatchObject({ reason: 'provider_not_licensed' });
    state = { kind: 'loaded', licence: licence({ providers: { local: true, managed_cloud: true } }) };
    await gate.authorize({ provider_id: 'vllm' });
  });
});

describe('LicenceGate: transaction budgets', () => {
  it('lets exactly the budget through when 50 calls race, and counts exactly that', async () => {
    state = { kind: 'loaded', licence: licence({ transaction_budgets: { claims_intake: 10 } }) };
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' })),
    );
    const allowed = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(allowed).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(PlatformError);
      expect((r.reason as PlatformError).details).toEqual({ reason: 'transaction_budget_exhausted', workflow_type: 'claims_intake', budget: 10 });
    }
    expect((await gate.usage()).transactions).toEqual({ claims_intake: 10 });
    expect(await gate.status()).toMatchObject({ transaction_utilization: { claims_intake: { budget: 10, used: 10, remaining: 0 } } });
  });

  it('gives the slot of a failed call back on release', async () => {
    state = { kind: 'loaded', licence: licence({ transaction_budgets: { claims_intake: 1 } }) };
    const failed = await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' });
    expect((await refusal({ provider_id: 'local', workflow_type: 'claims_intake' })).message).toContain(
      "transaction budget for workflow type 'claims_intake' (1) is used up",
    );
    await failed.release();
    await failed.release();
    expect((await gate.usage()).transactions).toEqual({});
    const next = await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' });
    await next.commit({ cost_usd: 0 });
    await next.release();
    expect((await gate.usage()).transactions).toEqual({ claims_intake: 1 });
  });

  it('under a hold, gives the transaction back once whoever withdraws it, and refuses a call whose hold was withdrawn first', async () => {
    state = { kind: 'loaded', licence: licence({ transaction_budgets: { claims_intake: 5 } }) };
    const hold = { id: 'invocation:i-1', until: new Date(Date.now() + 86_400_000).toISOString() };
    const held = await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake', hold });
    expect((await gate.usage()).transactions).toEqual({ claims_intake: 1 });
    // The requester that gave up on it withdraws the hold; the worker's own release is then a no-op.
    expect(await store.counters.withdraw(hold)).toBe('withdrawn');
    await held.release();
    expect((await gate.usage()).transactions).toEqual({});
    const late = { id: 'invocation:i-2', until: hold.until };
    expect(await store.counters.withdraw(late)).toBe('prevented');
    const error = await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake', hold: late }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).message).toMatch(/^invocation cancelled/);
    expect((error as PlatformError).message).toMatch(/hold 'invocation:i-2' was withdrawn.*nothing was charged/);
    expect((await gate.usage()).transactions).toEqual({});
  });

  it('counts uncapped types (null or absent) without refusing, and calls outside a workflow type not at all', async () => {
    state = { kind: 'loaded', licence: licence({ transaction_budgets: { servicing: null } }) };
    for (let i = 0; i < 3; i++) await gate.authorize({ provider_id: 'local', workflow_type: 'servicing' });
    await gate.authorize({ provider_id: 'local', workflow_type: 'recovery' });
    await gate.authorize({ provider_id: 'local' });
    expect((await gate.usage()).transactions).toEqual({ servicing: 3, recovery: 1 });
  });

  it('refuses a budget of zero outright', async () => {
    state = { kind: 'loaded', licence: licence({ transaction_budgets: { claims_intake: 0 } }) };
    expect((await refusal({ provider_id: 'local', workflow_type: 'claims_intake' })).details).toMatchObject({ reason: 'transaction_budget_exhausted' });
  });
});

describe('LicenceGate: spend', () => {
  const cloudLicence = (overrides: Partial<Licence> = {}) =>
    licence({
      providers: { local: true, managed_cloud: true },
      cloud_spend_usd: 5,
      provider_entitlements: [{ provider_id: 'openai', budget_usd: 2 }],
      transaction_budgets: { claims_intake: 100 },
      ...overrides,
    });

  it('records spend after the call and refuses the next call once the entitlement is spent', async () => {
    state = { kind: 'loaded', licence: cloudLicence() };
    await (await gate.authorize({ provider_id: 'openai', workflow_type: 'claims_intake' })).commit({ cost_usd: 1.5 });
    // Under budget when it started: allowed, and its actual cost is recorded in full.
    await (await gate.authorize({ provider_id: 'openai', workflow_type: 'claims_intake' })).commit({ cost_usd: 0.75 });
    const error = await refusal({ provider_id: 'openai', workflow_type: 'claims_intake' });
    expect(error.message).toContain("spend budget for provider 'openai' (2 USD) is used up");
    expect(error.details).toEqual({ reason: 'provider_budget_exhausted', provider_id: 'openai', budget_usd: 2, spent_usd: 2.25 });
    expect(await gate.status()).toMatchObject({
      transaction_utilization: { claims_intake: { used: 2 } },
      provider_entitlements: [{ provider_id: 'openai', budget_usd: 2, spent_usd: 2.25, remaining_usd: 0 }],
      cloud_spend: { budget_usd: 5, spent_usd: 2.25, remaining_usd: 2.75 },
    });
  });

  it('counts every non-local provider against cloud spend, never local', async () => {
    state = { kind: 'loaded', licence: cloudLicence({ provider_entitlements: [] }) };
    await (await gate.authorize({ provider_id: 'vllm' })).commit({ cost_usd: 3 });
    await (await gate.authorize({ provider_id: 'local' })).commit({ cost_usd: 0 });
    await (await gate.authorize({ provider_id: 'ollama' })).commit({ cost_usd: 2 });
    expect((await refusal({ provider_id: 'vllm' })).details).toEqual({ reason: 'cloud_spend_exhausted', budget_usd: 5, spent_usd: 5 });
    await gate.authorize({ provider_id: 'local' });
    expect(await gate.usage()).toEqual({ transactions: {}, provider_spend_micro_usd: { vllm: 3_000_000, ollama: 2_000_000 }, cloud_spend_micro_usd: 5_000_000 });
  });

  it('keeps sub-cent costs exact and caps nothing when the budgets are null', async () => {
    state = { kind: 'loaded', licence: cloudLicence({ cloud_spend_usd: null, provider_entitlements: [{ provider_id: 'openai', budget_usd: null }] }) };
    for (let i = 0; i < 3; i++) await (await gate.authorize({ provider_id: 'openai' })).commit({ cost_usd: 0.1 });
    expect(await gate.status()).toMatchObject({
      cloud_spend: null,
      provider_entitlements: [{ provider_id: 'openai', budget_usd: null, spent_usd: 0.3, remaining_usd: null }],
    });
  });

  it('does not record the spend of a released call and rejects a negative cost', async () => {
    state = { kind: 'loaded', licence: cloudLicence() };
    const released = await gate.authorize({ provider_id: 'openai' });
    await released.release();
    await released.commit({ cost_usd: 1 });
    expect((await gate.usage()).cloud_spend_micro_usd).toBe(0);
    await expect((await gate.authorize({ provider_id: 'openai' })).commit({ cost_usd: -1 })).rejects.toThrow(/cost_usd/);
  });
});

describe('LicenceGate: periods and durability', () => {
  it('starts a new period at zero and keeps the old period apart', async () => {
    state = { kind: 'loaded', licence: licence({ transaction_budgets: { claims_intake: 2 } }) };
    for (let i = 0; i < 2; i++) await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' });
    expect((await refusal({ provider_id: 'local', workflow_type: 'claims_intake' })).details).toMatchObject({ reason: 'transaction_budget_exhausted' });

    const december = licence({ period_start: '2026-12-01T00:00:00Z', period_end: '2027-01-01T00:00:00Z', transaction_budgets: { claims_intake: 2 } });
    state = { kind: 'loaded', licence: december };
    expect((await gate.usage()).transactions).toEqual({});
    await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' });

    // Another carrier sharing the store has its own counters.
    state = { kind: 'loaded', licence: licence({ carrier_id: 'other-002', transaction_budgets: { claims_intake: 2 } }) };
    expect((await gate.usage()).transactions).toEqual({});
    state = { kind: 'loaded', licence: december };
    expect((await gate.usage()).transactions).toEqual({ claims_intake: 1 });
  });

  it('treats two spellings of one period start as the same period', async () => {
    state = { kind: 'loaded', licence: licence() };
    await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' });
    state = { kind: 'loaded', licence: licence({ period_start: '2026-11-01T01:00:00+01:00' }) };
    expect((await gate.usage()).transactions).toEqual({ claims_intake: 1 });
  });

  it('keeps the counters across a restart (the store file reopened)', async () => {
    state = { kind: 'loaded', licence: licence({ transaction_budgets: { claims_intake: 3 }, providers: { local: true, managed_cloud: true } }) };
    await (await gate.authorize({ provider_id: 'openai', workflow_type: 'claims_intake' })).commit({ cost_usd: 1.25 });
    await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' });
    await store.close();

    store = await openEmbeddedStore({ path: dbPath, clock: clock.now });
    gate = createLicenceGate({ store, clock, state: () => state });
    expect(await gate.usage()).toEqual({
      transactions: { claims_intake: 2 },
      provider_spend_micro_usd: { openai: 1_250_000 },
      cloud_spend_micro_usd: 1_250_000,
    });
    await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' });
    expect((await refusal({ provider_id: 'local', workflow_type: 'claims_intake' })).details).toMatchObject({ reason: 'transaction_budget_exhausted' });
  });

  it('reports no usage and no_licence without a licence', async () => {
    state = { kind: 'none', reason: 'the licence file cannot be read' };
    expect(await gate.usage()).toEqual({ transactions: {}, provider_spend_micro_usd: {}, cloud_spend_micro_usd: 0 });
    expect(await gate.status()).toMatchObject({ status: 'no_licence', enforcement: 'all_blocked' });
  });
});
