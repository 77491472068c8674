import type { LicenceClaims } from '@agent-platform/contracts';

/**
 * A carrier licence whose signature has been verified (DECISIONS D3): its claims, as signed.
 * Expiry is not checked at load time, so that an expired licence still shows `status: expired`;
 * the gate and the status compute it against the clock.
 */
export type Licence = LicenceClaims;

/**
 * What the platform holds: a verified licence, or none and why (no file configured, unreadable,
 * bad signature, bad claims). With none, every model invocation is refused.
 */
export type LicenceState = { kind: 'none'; reason: string } | { kind: 'loaded'; licence: Licence };

/** Spend is counted in integer micro-USD so that counters stay exact integers. */
export const MICRO_USD_PER_USD = 1_000_000;

export function toMicroUsd(usd: number): number {
  return Math.round(usd * MICRO_USD_PER_USD);
}

export function fromMicroUsd(micro: number): number {
  return micro / MICRO_USD_PER_USD;
}

/** The built-in offline provider (DECISIONS D6); every other provider counts as cloud. */
export const LOCAL_PROVIDER_ID = 'local';

/** Milliseconds until expiry, negative once expired. */
export function licenceRemainingMs(licence: Licence, now: Date): number {
  return licence.exp * 1000 - now.getTime();
}

/** Expired at and after `exp` (a JWT is not accepted "on or after" its expiry, RFC 7519 §4.1.4). */
export function isLicenceExpired(licence: Licence, now: Date): boolean {
  return licenceRemainingMs(licence, now) <= 0;
}

/**
 * Usage counted against a licence in its current period. Transactions are per workflow type;
 * spend is integer micro-USD per provider, and the sum over non-local providers for cloud spend.
 */
export interface LicenceUsage {
  transactions: Record<string, number>;
  provider_spend_micro_usd: Record<string, number>;
  cloud_spend_micro_usd: number;
}

/** Usage without a licence. Frozen: callers share this one object. */
export const EMPTY_LICENCE_USAGE: LicenceUsage = Object.freeze({
  transactions: Object.freeze({}),
  provider_spend_micro_usd: Object.freeze({}),
  cloud_spend_micro_usd: 0,
});

/**
 * Whether the licence allows calling a provider (DECISIONS D6): `local` needs `providers.local`;
 * any other provider is allowed when the licence names it in `provider_entitlements` (a
 * dedicated spend line) or when `providers.managed_cloud` is true (managed-cloud providers in
 * general, bounded by `cloud_spend_usd`).
 */
export function isProviderAllowed(licence: Licence, providerId: string): boolean {
  if (providerId === LOCAL_PROVIDER_ID) return licence.providers.local;
  return licence.providers.managed_cloud || (licence.provider_entitlements ?? []).some((e) => e.provider_id === providerId);
}
