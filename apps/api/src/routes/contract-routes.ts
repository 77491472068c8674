import { ContractBindingList } from '@agent-platform/contracts';
import { listContractBindings } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';

/**
 * Spec §Integrations and contracts: `GET /contracts`, read-only. Bindings are created as a side
 * effect of equipping a competency that lists a contract (docs/tools.md "Contracts").
 */
export const contractRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/contracts',
    {
      config: { action: 'IntegrationRead' },
      schema: { tags: ['integrations'], summary: 'Contract bindings: which integration serves each contract', response: { 200: ContractBindingList } },
    },
    async () => ({ bindings: await listContractBindings(deps.store) }),
  );
};
