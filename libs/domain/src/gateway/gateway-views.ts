import type {
  ForcedLocalRouting,
  GatewayPools,
  GatewayTraffic as GatewayTrafficView,
  PiiCoverage,
  PoolProvider,
} from '@agent-platform/contracts';
import { parseModelKey, type ModelRegistry } from '../models/model-registry.ts';
import type { GatewayTraffic } from './gateway-traffic.ts';
import type { PrivacyAudit } from './privacy-audit.ts';
import { forcedLocalTarget, isLocalEligible, type GatewaySettings } from './routing-policy.ts';

/** What the api shows of the privacy gateway: GET /gateway/pools, /gateway/traffic and the two compliance figures. */
export interface GatewayViews {
  pools(): Promise<GatewayPools>;
  traffic(limit: number): Promise<GatewayTrafficView>;
  piiCoverage(): Promise<PiiCoverage>;
  forcedLocalRouting(): Promise<ForcedLocalRouting>;
}

/**
 * Read from the shared store and the running config only, never from the memory of a worker, so
 * that every api node of a fleet answers the same.
 */
export function createGatewayViews(deps: {
  settings: () => GatewaySettings;
  models: Pick<ModelRegistry, 'providers'>;
  traffic: GatewayTraffic;
  audit: Pick<PrivacyAudit, 'piiCoverage' | 'forcedLocalRouting'>;
}): GatewayViews {
  return {
    async pools() {
      const settings = deps.settings();
      const defaultProvider = parseModelKey(settings.models.default)?.provider ?? '';
      const target = isLocalEligible(defaultProvider, settings)
        ? settings.models.default
        : forcedLocalTarget(settings);
      const targetProvider = target === null ? null : (parseModelKey(target)?.provider ?? null);
      const providers = await Promise.all(
        deps.models.providers().map(async (p): Promise<PoolProvider> => ({
          id: p.id,
          kind: p.kind,
          ...(p.base_url === undefined ? {} : { base_url: p.base_url }),
          models: p.models,
          local_eligible: isLocalEligible(p.id, settings),
          default: p.id === defaultProvider,
          forced_local_target: settings.gateway.forced_local && p.id === targetProvider,
          // The built-in model runs in this process: it is up whenever this answers.
          health:
            p.kind === 'local'
              ? { status: 'ok', last_ok_at: null, last_failure_at: null }
              : await deps.traffic.health(p.id),
        })),
      );
      return {
        policy: {
          enabled: settings.gateway.enabled,
          categories: [...settings.gateway.categories],
          forced_local: settings.gateway.forced_local,
          when_no_local: settings.gateway.when_no_local,
          default_model: settings.models.default,
          local_model: target,
        },
        pools: [
          { pool: 'local', providers: providers.filter((p) => p.local_eligible) },
          { pool: 'cloud', providers: providers.filter((p) => !p.local_eligible) },
        ],
      };
    },
    async traffic(limit) {
      return {
        decisions: await deps.traffic.recent(limit),
        retention_hours: deps.settings().gateway.traffic_retention_hours,
      };
    },
    piiCoverage: () => deps.audit.piiCoverage(),
    forcedLocalRouting: () => deps.audit.forcedLocalRouting(),
  };
}
