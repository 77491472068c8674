import { ErrorEnvelope, RevocationFeed, RevocationFeedQuery } from '@agent-platform/contracts';
import type { RegistryRoutePlugin } from './registry-route.ts';

/**
 * `GET /revocations?since=N` (docs/registry.md "Revocation feed"): the security yanks after `since`
 * as a JWS signed with the registry key. Platforms poll it (or hear it pushed on the bus).
 */
export const revocationRoutes: RegistryRoutePlugin = (app, deps) => {
  app.get(
    '/revocations',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: ['signing'],
        summary: 'The signed revocation feed: security yanks with seq > since (at most 1000 per answer)',
        querystring: RevocationFeedQuery,
        response: { 200: RevocationFeed, 400: ErrorEnvelope },
      },
    },
    async (request) => deps.packages.revocations(request.query.since ?? 0),
  );
};
