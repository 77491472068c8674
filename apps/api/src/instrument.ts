import type { KeyService, LicenceGate, Vault } from '@agent-platform/domain';
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

/**
 * The licence budgets as gauges read at each scrape from the shared counters (docs/observability.md
 * "Budget"): the same numbers as GET /licence/status, so every api node reports the fleet's use.
 * Transaction gauges cover the workflow types the licence caps (a bounded label set: the licence's);
 * spend gauges `provider:<id>` and `cloud`. Nothing is reported without a loaded licence.
 */
export function instrumentLicence(gate: Pick<LicenceGate, 'status'>, metrics: PlatformMetrics): void {
  let last: { at: number; status: Promise<Awaited<ReturnType<LicenceGate['status']>>> } | null = null;
  // One read of the store per scrape, shared by the gauges below (they are collected together).
  const status = (): Promise<Awaited<ReturnType<LicenceGate['status']>>> => {
    const now = Date.now();
    if (last === null || now - last.at > 1_000) last = { at: now, status: gate.status() };
    return last.status;
  };
  const loaded = async () => {
    const s = await status();
    return s.status === 'no_licence' ? null : s;
  };
  const capped = async () => Object.entries((await loaded())?.transaction_utilization ?? {}).filter(([, u]) => u.budget !== null);
  const spend = async () => {
    const s = await loaded();
    if (s === null) return [];
    const providers = s.provider_entitlements.map((p) => ({ budget: `provider:${p.provider_id}`, spent: p.spent_usd, limit: p.budget_usd }));
    return s.cloud_spend === null ? providers : [...providers, { budget: 'cloud', spent: s.cloud_spend.spent_usd, limit: s.cloud_spend.budget_usd }];
  };
  metrics.gauge('licence_transactions_used', 'Licence transactions used in the current period, by capped workflow type.', ['workflow_type'], async () =>
    (await capped()).map(([type, u]) => ({ labels: { workflow_type: type }, value: u.used })),
  );
  metrics.gauge('licence_transactions_budget', 'Licence transaction budget of the current period, by capped workflow type.', ['workflow_type'], async () =>
    (await capped()).map(([type, u]) => ({ labels: { workflow_type: type }, value: u.budget ?? 0 })),
  );
  metrics.gauge('licence_transactions_remaining', 'Licence transactions left in the current period, by capped workflow type.', ['workflow_type'], async () =>
    (await capped()).map(([type, u]) => ({ labels: { workflow_type: type }, value: u.remaining ?? 0 })),
  );
  metrics.gauge('licence_spend_usd', 'Model spend in USD in the current licence period, by budget (provider:<id>, cloud).', ['budget'], async () =>
    (await spend()).map((b) => ({ labels: { budget: b.budget }, value: b.spent })),
  );
  metrics.gauge('licence_spend_budget_usd', 'Spend budget in USD of the current licence period, by capped budget.', ['budget'], async () =>
    (await spend()).filter((b) => b.limit !== null).map((b) => ({ labels: { budget: b.budget }, value: b.limit ?? 0 })),
  );
  // Labelled by carrier so that it is absent, not 0, without a licence (an unlabelled gauge always shows a value).
  metrics.gauge('licence_expiry_timestamp_seconds', 'When the licence expires, in Unix seconds (absent without a licence).', ['carrier_id'], async () => {
    const s = await loaded();
    return s === null ? [] : [{ labels: { carrier_id: s.carrier_id }, value: Math.floor(Date.parse(s.expires_at) / 1000) }];
  });
}
