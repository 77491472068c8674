import { ConnectorHealthList } from '@agent-platform/contracts';
import { checkConnectors } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';
import { httpProbe } from '../connectors/http-probe.ts';

/**
 * GET /connectors/health (spec §Endpoints "Integrations and contracts"; docs/connectors.md): the
 * six fixed connectors probed concurrently from `[connectors] urls` of the running config, so a
 * reload takes effect on the next call. Answers within `[connectors] timeout_ms`.
 */
export const connectorRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/connectors/health',
    {
      config: { action: 'IntegrationRead' },
      schema: {
        tags: ['integrations'],
        summary: 'Reachability of the six connectors (Healthy, Degraded, Unreachable, NotConfigured)',
        response: { 200: ConnectorHealthList },
      },
    },
    async () => ({ connectors: await checkConnectors(deps.config.current().connectors, httpProbe) }),
  );
};
