import { LicenceStatus } from '@agent-platform/contracts';
import type { RoutePlugin } from '../api-app.ts';

const TAGS = ['licence'];

/**
 * GET /licence/status (spec §Endpoints "Usage and licence"). Budgets come from the signed
 * licence only, so this area is read-only: there is no route that changes a budget. The body
 * and its computation are described in docs/licence.md.
 */
export const licenceRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/licence/status',
    {
      config: { action: 'LicenceRead' },
      schema: { tags: TAGS, summary: 'The loaded licence, its expiry and budget utilisation, or no_licence', response: { 200: LicenceStatus } },
    },
    async () => deps.licence.gate.status(),
  );
};
