import type { PiiCategory, PlatformConfig } from '@agent-platform/contracts';
import { parseModelKey } from '../models/model-registry.ts';

/** The parts of the running config the gateway reads, per request (a reload applies to the next one). */
export type GatewaySettings = Pick<PlatformConfig, 'gateway' | 'providers' | 'models'>;

/** The built-in provider (DECISIONS D6): in the process, so always local-eligible. */
const BUILT_IN_LOCAL = 'local';

/** Built-in `local`, or a `[[providers]]` table with `local_eligible = true`. */
export function isLocalEligible(providerId: string, settings: Pick<GatewaySettings, 'providers'>): boolean {
  if (providerId === BUILT_IN_LOCAL) return true;
  return settings.providers.some((p) => p.id === providerId && p.local_eligible === true);
}

/**
 * Where forced-local requests go when the requested model is not local-eligible itself:
 * `[gateway] local_model`, else the first model of the first configured local-eligible provider
 * that lists models. Never the built-in echo unless named: answering a customer's claim with an
 * echo of their own words is not a local model, it is an outage (docs/privacy-gateway.md).
 */
export function forcedLocalTarget(settings: GatewaySettings): string | null {
  if (settings.gateway.local_model !== '') return settings.gateway.local_model;
  const provider = settings.providers.find(
    (p) => p.id !== BUILT_IN_LOCAL && p.local_eligible === true && (p.models ?? []).length > 0,
  );
  return provider === undefined ? null : `${provider.id}/${provider.models![0]!}`;
}

export interface RouteDecision {
  requested_key: string;
  requested_provider: string;
  requested_model: string;
  /** Where the request goes; null when it is refused. */
  target_key: string | null;
  /** null when no category is configured: nothing was looked for. */
  pii_detected: boolean | null;
  pii_categories: PiiCategory[];
  /** A local-eligible model existed for this request (the requested one, or the forced-local target). */
  local_eligible: boolean;
  /** Sent to a local-eligible model because personal data was detected and `[gateway] forced_local` is on. */
  forced_local: boolean;
  rerouted: boolean;
}

/**
 * The routing policy, pure. Without `forced_local`, or without personal data, the request goes
 * where it was aimed. With both: to the requested model if it is local-eligible, else to the
 * forced-local target; with no target, `when_no_local` decides (refuse: `target_key` null; or
 * send it, tokenised, where it was aimed).
 */
export function decideRoute(
  settings: GatewaySettings,
  requestedKey: string,
  detected: { categories: PiiCategory[] } | null,
): RouteDecision {
  const requested = parseModelKey(requestedKey) ?? { provider: requestedKey, model: '' };
  const localKey = isLocalEligible(requested.provider, settings) ? requestedKey : forcedLocalTarget(settings);
  const piiDetected = detected === null ? null : detected.categories.length > 0;
  const base = {
    requested_key: requestedKey,
    requested_provider: requested.provider,
    requested_model: requested.model,
    pii_detected: piiDetected,
    pii_categories: detected?.categories ?? [],
    local_eligible: localKey !== null,
  };
  if (!settings.gateway.forced_local || piiDetected !== true)
    return { ...base, target_key: requestedKey, forced_local: false, rerouted: false };
  if (localKey !== null)
    return { ...base, target_key: localKey, forced_local: true, rerouted: localKey !== requestedKey };
  const refuse = settings.gateway.when_no_local === 'refuse';
  return { ...base, target_key: refuse ? null : requestedKey, forced_local: false, rerouted: false };
}
