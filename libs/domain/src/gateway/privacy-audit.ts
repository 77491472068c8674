import {
  FORCED_LOCAL_TARGET_PCT,
  PRIVACY_AUDIT_ACTIONS,
  type ForcedLocalRouting,
  type PiiCoverage,
} from '@agent-platform/contracts';
import type { CounterDelta, Counters } from '@agent-platform/store';
import type { AuditTrail } from '../audit/audit-entry.ts';

/**
 * The store counters kept beside the privacy gateway's audit entries: what GET
 * /compliance/pii-coverage and /compliance/forced-local-routing read, so that neither walks the
 * audit trail (docs/privacy-gateway.md "How the figures are counted").
 */
export const PRIVACY_COUNTERS = {
  tokenised: 'privacy:pii:tokenised',
  hydrated: 'privacy:pii:hydrated',
  forcedLocal: 'privacy:routing:forced_local',
  localEligible: 'privacy:routing:local_eligible',
} as const;

/** Who caused an entry: the identity and role of the request's caller, or `system`. */
export interface PrivacyActor {
  identity: string;
  role: string;
  agent_id: string;
}

/** `gateway.routing` metadata; `pii_detected`/`pii_categories` are absent when nothing was looked for. */
export interface RoutingMetadata {
  pii_detected?: boolean;
  pii_categories?: string[];
  local_eligible: boolean;
  forced_local: boolean;
  rerouted: boolean;
  requested_provider: string;
  requested_model: string;
  provider: string | null;
  model: string | null;
  correlation_id: string;
}

export interface PiiMetadata {
  count: number;
  categories: Record<string, number>;
  correlation_id: string;
}

export interface PrivacyAudit {
  readonly enabled: boolean;
  routing(actor: PrivacyActor, metadata: RoutingMetadata, result: 'routed' | 'refused'): Promise<void>;
  tokenised(actor: PrivacyActor, metadata: PiiMetadata & { provider: string; model: string }): Promise<void>;
  hydrated(actor: PrivacyActor, metadata: PiiMetadata): Promise<void>;
  /** The two compliance figures, from the counters (the disabled shapes with `[audit] enabled = false`). */
  piiCoverage(): Promise<PiiCoverage>;
  forcedLocalRouting(): Promise<ForcedLocalRouting>;
}

/**
 * The privacy gateway's audit entries (category `privacy`; counts and categories only, never a
 * value or a token) and the counters beside them. A counter moves only after its entry is
 * appended, in the same call: the counters equal a count of the trail's entries, except for a
 * process killed in the microseconds between the two writes, which leaves one counter one short.
 */
export function createPrivacyAudit(deps: {
  audit: Pick<AuditTrail, 'record' | 'enabled'>;
  counters: Counters;
}): PrivacyAudit {
  const record = async (
    actor: PrivacyActor,
    action: string,
    result: string,
    metadata: object,
    deltas: CounterDelta[],
  ): Promise<void> => {
    const entry = await deps.audit.record({
      category: 'privacy',
      identity: actor.identity,
      role: actor.role,
      action,
      target: `agent:${actor.agent_id}`,
      result,
      metadata: { ...metadata },
    });
    // Only counters that move: a request without detected personal data (the usual one) costs its
    // audit entry and no counter write.
    const moving = deltas.filter((d) => d.delta !== 0);
    if (entry !== null && moving.length > 0) await deps.counters.addMany(moving);
  };

  return {
    enabled: deps.audit.enabled,
    routing: (actor, metadata, result) => {
      const counted = metadata.pii_detected === true;
      return record(actor, PRIVACY_AUDIT_ACTIONS.routing, result, metadata, [
        { key: PRIVACY_COUNTERS.localEligible, delta: counted && metadata.local_eligible ? 1 : 0 },
        { key: PRIVACY_COUNTERS.forcedLocal, delta: counted && metadata.forced_local ? 1 : 0 },
      ]);
    },
    tokenised: (actor, metadata) =>
      record(actor, PRIVACY_AUDIT_ACTIONS.tokenised, 'success', metadata, [
        { key: PRIVACY_COUNTERS.tokenised, delta: 1 },
      ]),
    hydrated: (actor, metadata) =>
      record(actor, PRIVACY_AUDIT_ACTIONS.hydrated, 'success', metadata, [
        { key: PRIVACY_COUNTERS.hydrated, delta: 1 },
      ]),
    piiCoverage: async () => {
      if (!deps.audit.enabled) return { coverage_pct: null, tokenised: 0, hydrated: 0, status: 'disabled' };
      const counts = await deps.counters.list('privacy:pii:');
      const tokenised = counts[PRIVACY_COUNTERS.tokenised] ?? 0;
      const hydrated = counts[PRIVACY_COUNTERS.hydrated] ?? 0;
      return { coverage_pct: tokenised === 0 ? 100.0 : (hydrated / tokenised) * 100, tokenised, hydrated };
    },
    forcedLocalRouting: async () => {
      if (!deps.audit.enabled)
        return {
          forced_local: 0,
          local_eligible: 0,
          pct_of_local_eligible: null,
          target_pct: FORCED_LOCAL_TARGET_PCT,
          status: 'disabled',
        };
      const counts = await deps.counters.list('privacy:routing:');
      const forced = counts[PRIVACY_COUNTERS.forcedLocal] ?? 0;
      const eligible = counts[PRIVACY_COUNTERS.localEligible] ?? 0;
      return {
        forced_local: forced,
        local_eligible: eligible,
        pct_of_local_eligible: eligible === 0 ? null : (forced / eligible) * 100,
        target_pct: FORCED_LOCAL_TARGET_PCT,
      };
    },
  };
}
