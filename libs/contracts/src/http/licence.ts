import { Type, type Static } from 'typebox';
import { LicenceClaims } from '../licence.ts';

/**
 * GET /licence/status (spec §Resources "Licence status"). Two shapes: the loaded licence with its
 * utilisation for the current budget period, or `no_licence`. How each field is computed is in
 * docs/licence.md.
 */

const Timestamp = Type.String({ description: 'ISO 8601 UTC.' });
const Usd = Type.Number({ description: 'USD.' });
const UsdOrNull = Type.Union([Type.Number(), Type.Null()], { description: 'USD; null when uncapped.' });

/** One workflow type's transactions in the current period. */
export const TransactionUtilization = Type.Object({
  budget: Type.Union([Type.Integer(), Type.Null()], { description: 'Null when uncapped.' }),
  used: Type.Integer({ minimum: 0 }),
  remaining: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Null when uncapped; never negative.' }),
});
export type TransactionUtilization = Static<typeof TransactionUtilization>;

export const CloudSpend = Type.Object({ budget_usd: Usd, spent_usd: Usd, remaining_usd: Usd });
export type CloudSpend = Static<typeof CloudSpend>;

export const ProviderEntitlementUsage = Type.Object({
  provider_id: Type.String(),
  budget_usd: UsdOrNull,
  spent_usd: Usd,
  remaining_usd: UsdOrNull,
});
export type ProviderEntitlementUsage = Static<typeof ProviderEntitlementUsage>;

export const LoadedLicenceStatus = Type.Object({
  carrier_name: Type.String(),
  carrier_id: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('expiring_soon'), Type.Literal('expired')], {
    description: '`expiring_soon` when 7 days or fewer remain.',
  }),
  expires_at: Timestamp,
  period_start: Timestamp,
  period_end: Timestamp,
  days_remaining: Type.Integer({ minimum: 0, description: 'Whole days until expiry, rounded down; 0 once expired.' }),
  transaction_utilization: Type.Record(Type.String(), TransactionUtilization, {
    description: 'Keyed by workflow type: every type with a budget and every type with usage.',
  }),
  cloud_spend: Type.Union([CloudSpend, Type.Null()], { description: 'Null when the licence provisions no managed-cloud spend.' }),
  provider_entitlements: Type.Array(ProviderEntitlementUsage),
  providers: LicenceClaims.properties.providers,
});
export type LoadedLicenceStatus = Static<typeof LoadedLicenceStatus>;

export const NoLicenceStatus = Type.Object({
  status: Type.Literal('no_licence'),
  message: Type.String(),
  enforcement: Type.Literal('all_blocked', { description: 'Every model invocation is refused; there is no bypass.' }),
});
export type NoLicenceStatus = Static<typeof NoLicenceStatus>;

export const LicenceStatus = Type.Union([LoadedLicenceStatus, NoLicenceStatus]);
export type LicenceStatus = Static<typeof LicenceStatus>;
