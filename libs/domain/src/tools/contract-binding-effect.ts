import type { EquipEffect } from '../competencies/equip-effects.ts';
import { equippedCompetencies } from '../competencies/equip-effects.ts';
import { bindCompetencyContracts, type BindDeps } from './contract-bindings.ts';

/**
 * Contract bindings as an equip effect (docs/tools.md "Contracts"): installing or upgrading an agent
 * binds each contract its competencies list to an installed integration implementing it. A bind
 * the integration's live tools cannot carry throws, and the catalog undoes the install. Bindings
 * are shared by every agent using the contract, so an agent's removal leaves them.
 */
export function contractBindingEffect(deps: BindDeps): EquipEffect {
  return {
    name: 'contract bindings',
    async syncAgent(agent) {
      await bindCompetencyContracts(deps, [...(await equippedCompetencies(deps.store, agent)).values()]);
    },
    async agentRemoved() {},
  };
}
