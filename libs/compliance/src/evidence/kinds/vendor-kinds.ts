import type { EvidencePointer } from '@agent-platform/contracts';
import { LOCAL_PROVIDER_ID } from '@agent-platform/domain';
import { Type } from 'typebox';
import { direct, evidenceKind, listSome, plural } from '../evidence-kind.ts';

function hostOf(url: string | undefined): string {
  if (url === undefined) return '';
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/**
 * Third-party model providers as a register: who receives prompts, and whether the licence
 * bounds what each may cost. Uses the config (`[[providers]]`) and the licence only: no call.
 */
export const providerInventory = evidenceKind({
  kind: 'provider_inventory',
  describes:
    'Every third-party model provider is configured by the operator ([[providers]]) and bounded by the licence: a provider entitlement with a USD budget, or the managed-cloud spend budget.',
  params: Type.Object({}, { additionalProperties: false }),
  plan: () =>
    direct((facts) => {
      const cloud = facts.config.providers.filter((p) => p.id !== LOCAL_PROVIDER_ID);
      const pointers: EvidencePointer[] = cloud.map((p) => ({
        type: 'config',
        ref: `providers.${p.id}`,
        detail: `${p.kind ?? 'openai'} ${hostOf(p.base_url)}`.trim(),
      }));
      if (cloud.length === 0) {
        return {
          status: 'Satisfied',
          summary:
            'Only the built-in local model is configured: no third-party model provider receives prompts.',
          pointers: [{ type: 'config', ref: 'providers', detail: 'local only' }],
        };
      }
      const state = facts.licence;
      if (state.kind === 'none')
        return {
          status: 'Unsatisfied',
          summary: `No licence bounds the ${plural(cloud.length, 'third-party model provider')} configured.`,
          pointers,
        };
      const { licence } = state;
      // As the licence gate enforces it (docs/licence.md "Enforcement"): a provider is allowed by an
      // entitlement or by managed_cloud, and capped by its entitlement's budget, else by cloud_spend_usd,
      // which every non-local provider's spend counts toward, entitlement or not.
      const bounds = cloud.map((p) => {
        const entitlement = (licence.provider_entitlements ?? []).find((e) => e.provider_id === p.id);
        if (entitlement === undefined && !licence.providers.managed_cloud)
          return { id: p.id, bound: 'not allowed by the licence (calls refused)' };
        if (entitlement !== undefined && entitlement.budget_usd !== null)
          return { id: p.id, bound: `${entitlement.budget_usd} USD entitlement` };
        const cloudSpend = licence.cloud_spend_usd ?? null;
        if (cloudSpend !== null) return { id: p.id, bound: `managed-cloud budget of ${cloudSpend} USD` };
        return { id: p.id, bound: null };
      });
      const unbounded = bounds.filter((b) => b.bound === null).map((b) => b.id);
      if (unbounded.length > 0) {
        return {
          status: 'Unsatisfied',
          summary: `Spend on ${listSome(unbounded)} is not capped by the licence.`,
          pointers,
        };
      }
      return {
        status: 'Satisfied',
        summary: `${plural(cloud.length, 'third-party model provider')}, each bounded: ${listSome(
          bounds.map((b) => `${b.id} (${b.bound})`),
          6,
        )}.`,
        pointers,
      };
    }),
});
