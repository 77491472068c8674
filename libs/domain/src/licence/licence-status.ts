import type { LicenceStatus, LoadedLicenceStatus, ProviderEntitlementUsage, TransactionUtilization } from '@agent-platform/contracts';
import { fromMicroUsd, licenceRemainingMs, toMicroUsd, type Licence, type LicenceState, type LicenceUsage } from './licence.ts';

/** Spec §Limits: `expiring_soon` at 7 days or fewer remaining. */
export const EXPIRING_SOON_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The body of GET /licence/status (spec §Resources "Licence status"), computed from the held
 * licence, its usage in the current period and the time. Pure: the caller reads the counters.
 * - `status` compares the exact time left with 7 days: 7 days and one hour left is still
 *   `active` (more than 7 days remain) although `days_remaining`, rounded down, says 7.
 * - Remaining budgets never go negative: spend is recorded after the call, so it can pass the
 *   budget by the cost of the last call (docs/licence.md).
 */
export function licenceStatus(state: LicenceState, usage: LicenceUsage, now: Date): LicenceStatus {
  if (state.kind === 'none') {
    return {
      status: 'no_licence',
      message: `No licence is loaded (${state.reason}); all model invocations are blocked.`,
      enforcement: 'all_blocked',
    };
  }
  return loadedStatus(state.licence, usage, now);
}

function loadedStatus(licence: Licence, usage: LicenceUsage, now: Date): LoadedLicenceStatus {
  const remainingMs = licenceRemainingMs(licence, now);
  return {
    carrier_name: licence.carrier_name,
    carrier_id: licence.carrier_id,
    status: remainingMs <= 0 ? 'expired' : remainingMs <= EXPIRING_SOON_DAYS * DAY_MS ? 'expiring_soon' : 'active',
    expires_at: new Date(licence.exp * 1000).toISOString(),
    period_start: new Date(licence.period_start).toISOString(),
    period_end: new Date(licence.period_end).toISOString(),
    days_remaining: Math.max(0, Math.floor(remainingMs / DAY_MS)),
    transaction_utilization: transactionUtilization(licence, usage),
    cloud_spend: cloudSpend(licence, usage),
    provider_entitlements: (licence.provider_entitlements ?? []).map((e) => entitlementUsage(e.provider_id, e.budget_usd, usage)),
    providers: { local: licence.providers.local, managed_cloud: licence.providers.managed_cloud },
  };
}

/** Every workflow type with a budget (null included) or with usage, in key order. */
function transactionUtilization(licence: Licence, usage: LicenceUsage): Record<string, TransactionUtilization> {
  const budgets = licence.transaction_budgets ?? {};
  const types = [...new Set([...Object.keys(budgets), ...Object.keys(usage.transactions)])].sort();
  const out: Record<string, TransactionUtilization> = {};
  for (const type of types) {
    const budget = budgets[type] ?? null;
    const used = usage.transactions[type] ?? 0;
    out[type] = { budget, used, remaining: budget === null ? null : Math.max(0, budget - used) };
  }
  return out;
}

function cloudSpend(licence: Licence, usage: LicenceUsage): LoadedLicenceStatus['cloud_spend'] {
  const budget = licence.cloud_spend_usd;
  if (budget === undefined || budget === null) return null;
  const spent = usage.cloud_spend_micro_usd;
  return {
    budget_usd: budget,
    spent_usd: fromMicroUsd(spent),
    remaining_usd: fromMicroUsd(Math.max(0, toMicroUsd(budget) - spent)),
  };
}

function entitlementUsage(providerId: string, budget: number | null, usage: LicenceUsage): ProviderEntitlementUsage {
  const spent = usage.provider_spend_micro_usd[providerId] ?? 0;
  return {
    provider_id: providerId,
    budget_usd: budget,
    spent_usd: fromMicroUsd(spent),
    remaining_usd: budget === null ? null : fromMicroUsd(Math.max(0, toMicroUsd(budget) - spent)),
  };
}
