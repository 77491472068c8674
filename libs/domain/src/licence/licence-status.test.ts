import { describe, expect, it } from 'vitest';
import { EMPTY_LICENCE_USAGE, type Licence, type LicenceUsage } from './licence.ts';
import { licenceStatus } from './licence-status.ts';

const NOW = new Date('2026-11-10T12:00:00.000Z');
const DAY_SECS = 86_400;
const nowSecs = NOW.getTime() / 1000;

function licence(overrides: Partial<Licence> = {}): Licence {
  return {
    carrier_name: 'Acme Mutual',
    carrier_id: 'acme-001',
    iat: nowSecs - 10 * DAY_SECS,
    exp: nowSecs + 30 * DAY_SECS,
    period_start: '2026-11-01T00:00:00Z',
    period_end: '2026-12-01T00:00:00Z',
    providers: { local: true, managed_cloud: false },
    ...overrides,
  };
}

function usage(overrides: Partial<LicenceUsage> = {}): LicenceUsage {
  return { ...EMPTY_LICENCE_USAGE, ...overrides };
}

const loaded = (l: Licence) => ({ kind: 'loaded' as const, licence: l });

describe('licenceStatus', () => {
  it('reports an active licence with its dates, providers and empty utilisation', () => {
    expect(licenceStatus(loaded(licence()), EMPTY_LICENCE_USAGE, NOW)).toEqual({
      carrier_name: 'Acme Mutual',
      carrier_id: 'acme-001',
      status: 'active',
      expires_at: '2026-12-10T12:00:00.000Z',
      period_start: '2026-11-01T00:00:00.000Z',
      period_end: '2026-12-01T00:00:00.000Z',
      days_remaining: 30,
      transaction_utilization: {},
      cloud_spend: null,
      provider_entitlements: [],
      providers: { local: true, managed_cloud: false },
    });
  });

  it('turns expiring_soon at exactly 7 days left, not a second before', () => {
    const justOver = licenceStatus(loaded(licence({ exp: nowSecs + 7 * DAY_SECS + 1 })), EMPTY_LICENCE_USAGE, NOW);
    expect(justOver).toMatchObject({ status: 'active', days_remaining: 7 });
    const exactly = licenceStatus(loaded(licence({ exp: nowSecs + 7 * DAY_SECS })), EMPTY_LICENCE_USAGE, NOW);
    expect(exactly).toMatchObject({ status: 'expiring_soon', days_remaining: 7 });
    const hours = licenceStatus(loaded(licence({ exp: nowSecs + 5 * 3600 })), EMPTY_LICENCE_USAGE, NOW);
    expect(hours).toMatchObject({ status: 'expiring_soon', days_remaining: 0 });
  });

  it('is expired from the expiry instant on, with days_remaining never negative', () => {
    expect(licenceStatus(loaded(licence({ exp: nowSecs })), EMPTY_LICENCE_USAGE, NOW)).toMatchObject({ status: 'expired', days_remaining: 0 });
    expect(licenceStatus(loaded(licence({ exp: nowSecs - 40 * DAY_SECS })), EMPTY_LICENCE_USAGE, NOW)).toMatchObject({
      status: 'expired',
      days_remaining: 0,
    });
  });

  it('answers no_licence with the reason when none is loaded', () => {
    expect(licenceStatus({ kind: 'none', reason: 'the licence signature does not verify' }, EMPTY_LICENCE_USAGE, NOW)).toEqual({
      status: 'no_licence',
      message: 'No licence is loaded (the licence signature does not verify); all model invocations are blocked.',
      enforcement: 'all_blocked',
    });
  });

  it('lists every budgeted workflow type and every used one, null budgets uncapped', () => {
    const l = licence({ transaction_budgets: { claims_intake: 1000, servicing: null, recovery: 5 } });
    const status = licenceStatus(loaded(l), usage({ transactions: { claims_intake: 12, underwriting: 3, recovery: 7 } }), NOW);
    expect(status).toMatchObject({
      transaction_utilization: {
        claims_intake: { budget: 1000, used: 12, remaining: 988 },
        servicing: { budget: null, used: 0, remaining: null },
        underwriting: { budget: null, used: 3, remaining: null },
        // Over budget only if a licence with a smaller budget replaced the one that allowed them.
        recovery: { budget: 5, used: 7, remaining: 0 },
      },
    });
  });

  it('reports cloud spend and entitlements in USD, remaining never negative', () => {
    const l = licence({
      cloud_spend_usd: 500,
      provider_entitlements: [
        { provider_id: 'openai', budget_usd: 100 },
        { provider_id: 'vllm', budget_usd: null },
        { provider_id: 'anthropic', budget_usd: 1 },
      ],
    });
    const status = licenceStatus(
      loaded(l),
      usage({ cloud_spend_micro_usd: 42_300_000, provider_spend_micro_usd: { openai: 40_100_000, vllm: 700_000, anthropic: 1_500_000 } }),
      NOW,
    );
    expect(status).toMatchObject({
      cloud_spend: { budget_usd: 500, spent_usd: 42.3, remaining_usd: 457.7 },
      provider_entitlements: [
        { provider_id: 'openai', budget_usd: 100, spent_usd: 40.1, remaining_usd: 59.9 },
        { provider_id: 'vllm', budget_usd: null, spent_usd: 0.7, remaining_usd: null },
        { provider_id: 'anthropic', budget_usd: 1, spent_usd: 1.5, remaining_usd: 0 },
      ],
    });
  });

  it('shows cloud_spend null for an explicit null budget and a zero budget as provisioned', () => {
    expect(licenceStatus(loaded(licence({ cloud_spend_usd: null })), EMPTY_LICENCE_USAGE, NOW)).toMatchObject({ cloud_spend: null });
    expect(licenceStatus(loaded(licence({ cloud_spend_usd: 0 })), EMPTY_LICENCE_USAGE, NOW)).toMatchObject({
      cloud_spend: { budget_usd: 0, spent_usd: 0, remaining_usd: 0 },
    });
  });
});
