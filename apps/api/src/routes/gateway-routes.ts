import {
  ErrorEnvelope,
  ForcedLocalRouting,
  GatewayPools,
  GatewayTraffic,
  GatewayTrafficQuerystring,
  PiiCoverage,
} from '@agent-platform/contracts';
import type { RoutePlugin } from '../api-app.ts';

/**
 * The privacy gateway (docs/privacy-gateway.md): GET /gateway/pools and GET /gateway/traffic
 * (spec: routed, payloads ours) and the two compliance figures it feeds, GET
 * /compliance/pii-coverage and GET /compliance/forced-local-routing (spec §Compliance). All four
 * are SecurityRead: the same readers as the figures, since the pools and the decisions are what
 * explain them (where personal data may go, and where it went). Everything is read from the
 * shared store and the config, so any api node of a fleet answers the same.
 */
export const gatewayRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/gateway/pools',
    {
      config: { action: 'SecurityRead' },
      schema: {
        tags: ['gateway'],
        summary:
          'Model providers grouped into the local-eligible and the cloud pool, with the routing policy',
        response: { 200: GatewayPools },
      },
    },
    async () => deps.gateway.pools(),
  );

  app.get(
    '/gateway/traffic',
    {
      config: { action: 'SecurityRead' },
      schema: {
        tags: ['gateway'],
        summary:
          'Recent routing decisions of model requests, newest first (counts and categories, never values)',
        querystring: GatewayTrafficQuerystring,
        response: { 200: GatewayTraffic, 400: ErrorEnvelope },
      },
    },
    async (request) => deps.gateway.traffic(request.query.limit),
  );

  app.get(
    '/compliance/pii-coverage',
    {
      config: { action: 'SecurityRead' },
      schema: {
        tags: ['compliance'],
        summary:
          'Share of tokenised model requests whose replies were hydrated, all time, from the audit trail',
        response: { 200: PiiCoverage },
      },
    },
    async () => deps.gateway.piiCoverage(),
  );

  app.get(
    '/compliance/forced-local-routing',
    {
      config: { action: 'SecurityRead' },
      schema: {
        tags: ['compliance'],
        summary:
          'Requests with personal data sent to a local-eligible provider, against those that could have been',
        response: { 200: ForcedLocalRouting },
      },
    },
    async () => deps.gateway.forcedLocalRouting(),
  );
};
