import type { RoutePlugin } from '../api-app.ts';
import { agentRoutes } from './agent-routes.ts';
import { authRoutes } from './auth-routes.ts';
import { backupRoutes } from './backup-routes.ts';
import { catalogRoutes } from './catalog-routes.ts';
import { channelRoutes } from './channel-routes.ts';
import { chatRoutes } from './chat-routes.ts';
import { competencyRoutes } from './competency-routes.ts';
import { complianceRoutes } from './compliance-routes.ts';
import { connectorRoutes } from './connector-routes.ts';
import { contractRoutes } from './contract-routes.ts';
import { cronJobRoutes } from './cron-job-routes.ts';
import { daemonRoutes } from './daemon-routes.ts';
import { gatewayRoutes } from './gateway-routes.ts';
import { integrationRoutes } from './integration-routes.ts';
import { invocationRoutes } from './invocation-routes.ts';
import { modelRoutes } from './model-routes.ts';
import { licenceRoutes } from './licence-routes.ts';
import { memoryRoutes } from './memory-routes.ts';
import { scheduleRoutes } from './schedule-routes.ts';
import { securityRoutes } from './security-routes.ts';
import { skillRoutes } from './skill-routes.ts';
import { triggerRoutes } from './trigger-routes.ts';
import { transcriptRoutes } from './transcript-routes.ts';
import { usageRoutes } from './usage-routes.ts';
import { vaultRoutes } from './vault-routes.ts';
import { webhookRoutes } from './webhook-routes.ts';
import { workflowRoutes } from './workflow-routes.ts';
import { retentionRoutes } from './retention-routes.ts';
import { mcpRoutes } from '../mcp/mcp-routes.ts';
import { dashboardRoutes } from '../dashboard/dashboard-routes.ts';

/**
 * Every route group of the api surface, in registration order. A new area adds its plugin here;
 * the shared hooks (auth, role check, content type, audit, ...) apply to all of them.
 */
export const routePlugins: RoutePlugin[] = [
  daemonRoutes,
  authRoutes,
  securityRoutes,
  vaultRoutes,
  licenceRoutes,
  modelRoutes,
  catalogRoutes,
  skillRoutes,
  agentRoutes,
  memoryRoutes,
  invocationRoutes,
  chatRoutes,
  usageRoutes,
  scheduleRoutes,
  cronJobRoutes,
  workflowRoutes,
  competencyRoutes,
  connectorRoutes,
  integrationRoutes,
  contractRoutes,
  triggerRoutes,
  webhookRoutes,
  channelRoutes,
  transcriptRoutes,
  mcpRoutes,
  gatewayRoutes,
  complianceRoutes,
  retentionRoutes,
  backupRoutes,
  dashboardRoutes,
];
