import type { Store } from '@agent-platform/store';
import { catalogCollections, type CompetencyRecord, type IntegrationRecord } from '../catalog/catalog-records.ts';
import { Errors } from '../errors/errors.ts';
import type { IntegrationTool } from '../integrations/integration-tools.ts';
import { checkMapping } from './contract-translation.ts';

/** Spec §Integration "Contract binding": which integration serves a contract (GET /contracts). */
export interface ContractBinding {
  contract: string;
  integration_id: string;
  bound_at: string;
  /** The operator identity, or `system` for the automatic bind when an agent equips a competency. */
  bound_by: string;
}

interface BindingRecord extends ContractBinding {
  id: string;
}

export const CONTRACT_BINDINGS_COLLECTION = 'contract_bindings';

export function contractBindings(store: Store) {
  return store.collection<BindingRecord>(CONTRACT_BINDINGS_COLLECTION);
}

export async function listContractBindings(store: Store): Promise<ContractBinding[]> {
  const rows = await contractBindings(store).find();
  return rows
    .map(({ doc }) => ({ contract: doc.contract, integration_id: doc.integration_id, bound_at: doc.bound_at, bound_by: doc.bound_by }))
    .sort((a, b) => a.contract.localeCompare(b.contract));
}

export interface BindDeps {
  store: Store;
  now: () => Date;
  /**
   * The live tool list of an integration as its hosts last reported it; null when no host has it
   * connected (the mapping is then checked on first use instead).
   */
  liveTools: (integrationId: string) => Promise<IntegrationTool[] | null>;
}

/**
 * Spec §Integrations and contracts: when an agent equips a competency that lists a contract, the
 * contract is bound to an installed integration implementing it (`bound_by: system`). An existing
 * binding is kept while its integration still implements the contract. Among several candidates
 * the first by id is chosen. Before a new binding is written, the integration's live tools are
 * checked against its mapping; a failing check refuses the bind (ValidationError naming the tool
 * and field) and writes nothing. Contracts no integration implements are left unbound: activation
 * stays gated on them (activation-check.ts).
 */
export async function bindCompetencyContracts(deps: BindDeps, competencies: readonly CompetencyRecord[]): Promise<ContractBinding[]> {
  const { integrations, contracts } = catalogCollections(deps.store);
  const bindings = contractBindings(deps.store);
  const installed = (await integrations.find()).map((r) => r.doc).sort((a, b) => a.id.localeCompare(b.id));
  const wanted = [...new Set(competencies.flatMap((c) => c.contracts))];
  const planned: BindingRecord[] = [];
  for (const contract of wanted) {
    const current = (await bindings.get(contract))?.doc;
    if (current !== undefined && installed.some((i) => i.id === current.integration_id && contract in i.implements)) continue;
    const provider = installed.find((i) => contract in i.implements);
    if (provider === undefined) continue;
    await checkProvider(deps, contract, provider, (await contracts.get(contract))?.doc.tools ?? []);
    planned.push({ id: contract, contract, integration_id: provider.id, bound_at: deps.now().toISOString(), bound_by: 'system' });
  }
  for (const binding of planned) await bindings.upsert(binding);
  return planned;
}

async function checkProvider(
  deps: BindDeps,
  contract: string,
  provider: IntegrationRecord,
  contractTools: Parameters<typeof checkMapping>[0],
): Promise<void> {
  const live = await deps.liveTools(provider.id);
  if (live === null || contractTools.length === 0) return;
  const problems = checkMapping(contractTools, provider.implements[contract]!, live);
  if (problems.length === 0) return;
  throw Errors.validation(
    `integration '${provider.id}' cannot serve contract '${contract}': ${problems.map((p) => p.message).join('; ')}`,
    { contract, integration_id: provider.id, problems },
  );
}

/** Removes the bindings served by an integration (it was uninstalled). */
export async function unbindIntegration(store: Store, integrationId: string): Promise<void> {
  const bindings = contractBindings(store);
  for (const row of await bindings.find({ where: { integration_id: integrationId } })) await bindings.delete(row.doc.id);
}
