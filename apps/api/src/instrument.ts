import type { KeyService, Vault } from '@agent-platform/domain';
import type { PlatformMetrics } from '@agent-platform/observability';

/** Counts issued keys (`api_keys_created_total`) without the domain knowing about metrics. */
export function instrumentKeys(keys: KeyService, metrics: PlatformMetrics): KeyService {
  return {
    ...keys,
    create: async (input) => {
      const issued = await keys.create(input);
      metrics.apiKeysCreatedTotal.inc();
      return issued;
    },
    rotate: async (id, options) => {
      const issued = await keys.rotate(id, options);
      metrics.apiKeysCreatedTotal.inc();
      return issued;
    },
  };
}

/** Counts vault writes (`vault_writes_total`); values never pass through here into a metric. */
export function instrumentVault(vault: Vault, metrics: PlatformMetrics): Vault {
  return {
    ...vault,
    put: async (key, value) => {
      const entry = await vault.put(key, value);
      metrics.vaultWritesTotal.inc();
      return entry;
    },
  };
}
