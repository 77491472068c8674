import type { Counters } from '@agent-platform/store';
import type { Licence, LicenceUsage } from './licence.ts';

/**
 * Store counter keys of a licence's usage. They are scoped by carrier and budget period, so a
 * licence for a new period starts from zero while a reload (or restart) of the same licence
 * keeps counting where it was:
 * - `licence:<carrier_id>:<period_start>:tx:<workflow_type>`: transactions;
 * - `licence:<carrier_id>:<period_start>:spend:provider:<provider_id>`: micro-USD per provider;
 * - `licence:<carrier_id>:<period_start>:spend:cloud`: micro-USD over all non-local providers.
 * The carrier id is URI-encoded so that a `:` in it cannot make two carriers' keys meet;
 * `period_start` is normalised to `toISOString()` so that two spellings of one instant share keys.
 */
export interface LicenceCounterKeys {
  transactions(workflowType: string): string;
  readonly transactionsPrefix: string;
  providerSpend(providerId: string): string;
  readonly providerSpendPrefix: string;
  readonly cloudSpend: string;
}

export function licenceCounterKeys(licence: Licence): LicenceCounterKeys {
  const period = `licence:${encodeURIComponent(licence.carrier_id)}:${new Date(licence.period_start).toISOString()}:`;
  const transactionsPrefix = `${period}tx:`;
  const providerSpendPrefix = `${period}spend:provider:`;
  return {
    transactions: (workflowType) => `${transactionsPrefix}${workflowType}`,
    transactionsPrefix,
    providerSpend: (providerId) => `${providerSpendPrefix}${providerId}`,
    providerSpendPrefix,
    cloudSpend: `${period}spend:cloud`,
  };
}

/** Reads a licence's usage in its period; counters never written read as absent (zero). */
export async function readLicenceUsage(counters: Counters, licence: Licence): Promise<LicenceUsage> {
  const keys = licenceCounterKeys(licence);
  const [transactions, providers, cloud] = await Promise.all([
    counters.list(keys.transactionsPrefix),
    counters.list(keys.providerSpendPrefix),
    counters.get(keys.cloudSpend),
  ]);
  return {
    transactions: stripPrefix(transactions, keys.transactionsPrefix),
    provider_spend_micro_usd: stripPrefix(providers, keys.providerSpendPrefix),
    cloud_spend_micro_usd: cloud,
  };
}

/** Counters released back to zero stay as rows; a type never used is left out like one never seen. */
function stripPrefix(values: Record<string, number>, prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(values)) if (value !== 0) out[key.slice(prefix.length)] = value;
  return out;
}
