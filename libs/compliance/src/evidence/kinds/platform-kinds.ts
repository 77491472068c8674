import { PackageType, type EvidencePointer, type PlatformConfig } from '@agent-platform/contracts';
import { isLicenceExpired, type InstalledPackageRecord } from '@agent-platform/domain';
import { Type } from 'typebox';
import { direct, evidenceKind, listSome, plural } from '../evidence-kind.ts';

const NoParams = Type.Object({}, { additionalProperties: false });

const packagePointer = (p: InstalledPackageRecord): EvidencePointer => ({
  type: 'package',
  ref: `${p.name}@${p.version}`,
  detail: `${p.type}, ${p.source ?? 'path'}, ${p.content_hash}`,
});

export const packageInventory = evidenceKind({
  kind: 'package_inventory',
  describes:
    'The platform holds an inventory of what runs: every installed package (optionally of some types) with its version and content hash.',
  params: Type.Object(
    { types: Type.Optional(Type.Array(PackageType, { minItems: 1 })) },
    { additionalProperties: false },
  ),
  plan: (params) =>
    direct(async (facts) => {
      const all = await facts.packages();
      const types: readonly string[] | undefined = params.types;
      const packages = types === undefined ? all : all.filter((p) => types.includes(p.type));
      if (packages.length === 0)
        return {
          status: 'Unknown',
          summary: 'No package is installed: there is nothing to inventory yet.',
          pointers: [],
        };
      const unhashed = packages.filter((p) => !/^sha256:[0-9a-f]{64}$/.test(p.content_hash));
      if (unhashed.length > 0) {
        return {
          status: 'Unsatisfied',
          summary: `${plural(unhashed.length, 'installed package')} without a sha256 content hash: ${listSome(unhashed.map((p) => p.name))}.`,
          pointers: unhashed.map(packagePointer),
        };
      }
      const agents = packages.filter((p) => p.type === 'agent-template').length;
      return {
        status: 'Satisfied',
        summary: `${plural(packages.length, 'installed package')} (${plural(agents, 'agent')}), each with its version, source and sha256 content hash.`,
        pointers: packages.map(packagePointer),
      };
    }),
});

export const packagesSigned = evidenceKind({
  kind: 'packages_signed',
  describes:
    'Every installed package came from the registry, whose Ed25519 signature a trusted key verified at install; none from a local path.',
  params: NoParams,
  plan: () =>
    direct(async (facts) => {
      const packages = await facts.packages();
      if (packages.length === 0)
        return { status: 'Unknown', summary: 'No package is installed.', pointers: [] };
      const unsigned = packages.filter((p) => (p.source ?? 'path') !== 'registry');
      if (unsigned.length > 0) {
        return {
          status: 'Unsatisfied',
          summary: `${unsigned.length} of ${packages.length} installed packages were installed from a local path, with no registry signature: ${listSome(unsigned.map((p) => p.name))}.`,
          pointers: unsigned.map(packagePointer),
        };
      }
      return {
        status: 'Satisfied',
        summary: `${packages.length === 1 ? 'The installed package' : `All ${packages.length} installed packages`} came from the registry with a signature verified by a trusted key.`,
        pointers: [
          ...packages.map(packagePointer),
          {
            type: 'config',
            ref: 'catalog.trusted_keys',
            detail: `${facts.config.catalog.trusted_keys.length} keys`,
          },
        ],
      };
    }),
});

/** Budgets the licence caps (null = uncapped), as `name: value` lines. */
function cappedBudgets(claims: {
  transaction_budgets?: Record<string, number | null>;
  cloud_spend_usd?: number | null;
  provider_entitlements?: Array<{ provider_id: string; budget_usd: number | null }>;
}): string[] {
  const out: string[] = [];
  for (const [type, budget] of Object.entries(claims.transaction_budgets ?? {}).sort(([a], [b]) =>
    a < b ? -1 : 1,
  ))
    if (budget !== null) out.push(`${type}: ${budget} transactions`);
  if (claims.cloud_spend_usd !== undefined && claims.cloud_spend_usd !== null)
    out.push(`cloud spend: ${claims.cloud_spend_usd} USD`);
  for (const e of claims.provider_entitlements ?? [])
    if (e.budget_usd !== null) out.push(`${e.provider_id}: ${e.budget_usd} USD`);
  return out;
}

export const licenceBudgets = evidenceKind({
  kind: 'licence_budgets',
  describes:
    'A signed licence is loaded and unexpired, and (unless require_cap is false) caps at least one budget: model use is bounded and enforced.',
  params: Type.Object({ require_cap: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  plan: (params) =>
    direct((facts) => {
      const state = facts.licence;
      if (state.kind === 'none')
        return {
          status: 'Unsatisfied',
          summary: `No licence is loaded (${state.reason}): every model invocation is refused.`,
          pointers: [{ type: 'config', ref: 'licence.file' }],
        };
      const licence = state.licence;
      const expires = new Date(licence.exp * 1000).toISOString();
      const pointer: EvidencePointer = {
        type: 'licence',
        ref: licence.carrier_id,
        detail: `expires ${expires}`,
      };
      if (isLicenceExpired(licence, facts.now))
        return {
          status: 'Unsatisfied',
          summary: `The licence of ${licence.carrier_name} expired on ${expires}.`,
          pointers: [pointer],
        };
      const caps = cappedBudgets(licence);
      if (caps.length === 0 && params.require_cap !== false) {
        return {
          status: 'Unsatisfied',
          summary:
            'The licence caps no budget: no transaction, cloud-spend or provider budget bounds model use.',
          pointers: [pointer],
        };
      }
      return {
        status: 'Satisfied',
        summary: `The signed licence of ${licence.carrier_name} is valid until ${expires} and enforces: ${caps.length === 0 ? 'provider entitlements' : listSome(caps, 6)}.`,
        pointers: [pointer],
      };
    }),
});

/** Config keys that would hold a secret in the file itself (everything else names env variables). */
function secretsInConfig(config: PlatformConfig): string[] {
  const found: string[] = [];
  if ((config.registry.s3?.secret_access_key ?? '') !== '') found.push('registry.s3.secret_access_key');
  if ((config.audit.checkpoints.s3?.secret_access_key ?? '') !== '')
    found.push('audit.checkpoints.s3.secret_access_key');
  return found;
}

export const vaultInUse = evidenceKind({
  kind: 'vault_in_use',
  describes: 'Credentials live in the encrypted, write-only vault and the config file holds no secret value.',
  params: NoParams,
  plan: () =>
    direct(async (facts) => {
      const inFile = secretsInConfig(facts.config);
      if (inFile.length > 0) {
        return {
          status: 'Unsatisfied',
          summary: `The config file holds secret values: ${inFile.join(', ')}.`,
          pointers: inFile.map((key) => ({ type: 'config', ref: key, detail: 'set in the file' })),
        };
      }
      const entries = await facts.vault();
      if (entries.length === 0)
        return {
          status: 'Unknown',
          summary: 'The vault holds no credential; the config file holds none either.',
          pointers: [],
        };
      return {
        status: 'Satisfied',
        summary: `${plural(entries.length, 'credential')} held encrypted in the vault (values never readable); the config file holds no secret value.`,
        pointers: entries.map((e) => ({ type: 'vault_key', ref: e.key, detail: `stored ${e.stored_at}` })),
      };
    }),
});

export const humanEscalation = evidenceKind({
  kind: 'human_escalation',
  describes:
    "Workflow runs are handed to a human (state Escalated) when a step's outcome is in doubt; the count and rate are shown.",
  params: NoParams,
  plan: () =>
    direct(async (facts) => {
      const runs = await facts.runs();
      if (runs.escalated === 0) {
        return {
          status: 'Unknown',
          summary: `No workflow run was escalated to a human (${plural(runs.total, 'run')} in all): nothing shows the hand-off operating.`,
          pointers: [],
        };
      }
      const rate = ((runs.escalated / Math.max(1, runs.total)) * 100).toFixed(1);
      return {
        status: 'Satisfied',
        summary: `${runs.escalated} of ${plural(runs.total, 'workflow run')} (${rate}%) escalated to a human.`,
        pointers: runs.escalated_ids.map((id) => ({ type: 'workflow_run', ref: id, detail: 'Escalated' })),
      };
    }),
});
