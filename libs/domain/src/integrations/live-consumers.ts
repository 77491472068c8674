import type { Store } from '@agent-platform/store';
import { AGENTS_COLLECTION, type AgentRecord } from '../agents/agent-record.ts';
import { catalogCollections } from '../catalog/catalog-records.ts';

/** A Running agent that depends on an integration, and through what. */
export interface LiveConsumer {
  agent_id: string;
  agent: string;
  /** The equipped competency that creates the dependency. */
  competency: string;
  /** The contract of that competency the integration implements; null when the competency lists the integration itself. */
  contract: string | null;
}

/**
 * Who would break if `integrationId` stopped (spec §States "Integration": disconnect, reconnect
 * and delete are refused with 403 while live consumers depend on it). A live consumer is a
 * Running agent with an equipped competency that either lists a contract the integration
 * implements (`[implements.<contract>]`) or lists the integration in its `integrations`. The one
 * place this rule lives: contract bindings will be added here. Sorted by agent, then competency.
 */
export async function liveConsumers(store: Store, integrationId: string): Promise<LiveConsumer[]> {
  const records = catalogCollections(store);
  const integration = (await records.integrations.get(integrationId))?.doc;
  const implemented = new Set(Object.keys(integration?.implements ?? {}));
  const running = await store
    .collection<AgentRecord>(AGENTS_COLLECTION)
    .find({ where: { state: 'Running' } });
  if (running.length === 0) return [];
  const competencies = new Map((await records.competencies.find()).map(({ doc }) => [doc.id, doc]));
  const consumers: LiveConsumer[] = [];
  for (const { doc: agent } of running) {
    for (const name of agent.equipped_competencies) {
      const competency = competencies.get(name);
      if (competency === undefined) continue;
      const base = { agent_id: agent.id, agent: agent.name, competency: name };
      if (competency.integrations.includes(integrationId)) consumers.push({ ...base, contract: null });
      for (const contract of competency.contracts)
        if (implemented.has(contract)) consumers.push({ ...base, contract });
    }
  }
  return consumers.sort((a, b) => a.agent.localeCompare(b.agent) || a.competency.localeCompare(b.competency));
}
