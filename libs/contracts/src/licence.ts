import { Type, type Static } from 'typebox';

/** A budget in USD: non-negative, or null for uncapped (DECISIONS D3). */
const UsdBudget = () => Type.Union([Type.Number({ minimum: 0 }), Type.Null()]);

/** One entry of `provider_entitlements`: spend allowed on one model provider. */
export const ProviderEntitlement = Type.Object({
  provider_id: Type.String({ minLength: 1 }),
  /** USD; null = uncapped. */
  budget_usd: UsdBudget(),
});
export type ProviderEntitlement = Static<typeof ProviderEntitlement>;

/**
 * The claims of a carrier licence: a compact JWS signed with EdDSA (Ed25519), verified against
 * `[licence] public_key_file` (DECISIONS D3). Extra claims (iss, sub, jti, ...) are tolerated so
 * that an issuer may add its own bookkeeping without invalidating the licence.
 */
export const LicenceClaims = Type.Object({
  carrier_name: Type.String({ minLength: 1 }),
  carrier_id: Type.String({ minLength: 1 }),
  /** Issued at, seconds since the epoch. */
  iat: Type.Integer({ minimum: 0 }),
  /** Expiry (`expires_at` in the licence status), seconds since the epoch. */
  exp: Type.Integer({ minimum: 0 }),
  /** The budget period the usage counters cover, ISO 8601 UTC. */
  period_start: Type.String({ format: 'date-time' }),
  period_end: Type.String({ format: 'date-time' }),
  /** Transactions allowed per workflow type; null or an absent type = uncapped. */
  transaction_budgets: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]))),
  /** Managed-cloud spend in USD; absent or null = `cloud_spend` is null in the status. */
  cloud_spend_usd: Type.Optional(UsdBudget()),
  provider_entitlements: Type.Optional(Type.Array(ProviderEntitlement)),
  /** Which provider families the licence allows. */
  providers: Type.Object({ local: Type.Boolean(), managed_cloud: Type.Boolean() }),
});
export type LicenceClaims = Static<typeof LicenceClaims>;
