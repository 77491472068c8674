import {
  ActiveCompetencies,
  CompetencyDetail,
  CompetencyIdParams,
  CompetencyInstallBody,
  CompetencyInstalled,
  CompetencyList,
  DependencyReport,
  DeprecatedCompetencyConfig,
  ErrorEnvelope,
  ScheduleHealth,
  type DeprecatedCompetencyConfig as DeprecatedBody,
} from '@agent-platform/contracts';
import { createCompetencyService, skillInstalled, type CompetencyService } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';
import { agentCompetencyRoutes } from './agent-competency-routes.ts';

/**
 * Spec §Endpoints "Competencies", the competency-scoped routes (the agent-scoped ones are
 * agent-competency-routes.ts); docs/competencies.md. Competencies are package names, not UUIDs.
 * The static paths (`active`, `schedule-health`, `install`) win over `:id`.
 */
const TAGS = ['competencies'];
const Errors4xx = { 400: ErrorEnvelope, 404: ErrorEnvelope };

/** Spec: the per-competency config routes are deprecated; settings are per agent. */
const DEPRECATED: DeprecatedBody = {
  deprecated: true,
  message:
    'per-competency config is deprecated: settings are per agent, use GET or PUT /agents/{id}/competencies/{cid}/config',
  values: {},
  schema: [],
};

export function competencyService(deps: ApiDeps): CompetencyService {
  return createCompetencyService({
    store: deps.store,
    agents: deps.agents,
    catalog: deps.catalog,
    schedules: deps.schedules,
    clock: deps.clock,
    skillInstalled: skillInstalled(deps.store),
  });
}

export const competencyRoutes: RoutePlugin = (app, deps) => {
  const competencies = competencyService(deps);

  app.get(
    '/competencies',
    {
      config: { action: 'AgentList' },
      schema: {
        tags: TAGS,
        summary: 'Installed competencies, sorted by id',
        response: { 200: CompetencyList },
      },
    },
    async () => ({ competencies: await competencies.list() }),
  );

  app.post(
    '/competencies/install',
    {
      config: { action: 'CompetencyInstall', audit: 'agents' },
      schema: {
        tags: TAGS,
        summary:
          'Install a competency package (and its dependencies) from a local directory; other package types are refused',
        body: CompetencyInstallBody,
        response: { 201: CompetencyInstalled, ...Errors4xx, 500: ErrorEnvelope },
      },
    },
    async (request, reply) => reply.code(201).send(await competencies.install(request.body.path)),
  );

  app.get(
    '/competencies/active',
    {
      config: { action: 'AgentList' },
      schema: {
        tags: TAGS,
        summary: 'Always an empty array (spec: no competency lifecycle exists)',
        response: { 200: ActiveCompetencies },
      },
    },
    async () => [],
  );

  app.get(
    '/competencies/schedule-health',
    {
      config: { action: 'AgentList' },
      schema: {
        tags: TAGS,
        summary: 'Drift between scheduled competencies and their cron jobs, one element per problem',
        response: { 200: ScheduleHealth },
      },
    },
    async () => ({ drift: await competencies.scheduleHealth() }),
  );

  app.get(
    '/competencies/:id',
    {
      config: { action: 'AgentList' },
      schema: {
        tags: TAGS,
        summary: 'One competency: its manifest, status and skill states',
        params: CompetencyIdParams,
        response: { 200: CompetencyDetail, ...Errors4xx },
      },
    },
    async (request) => competencies.get(request.params.id),
  );

  for (const path of ['/competencies/:id/validate-deps', '/competencies/:id/deps']) {
    app.get(
      path,
      {
        config: { action: 'AgentList' },
        schema: {
          tags: TAGS,
          summary: 'Whether each skill the competency lists is installed',
          params: CompetencyIdParams,
          response: { 200: DependencyReport, ...Errors4xx },
        },
      },
      async (request) => competencies.deps(request.params.id),
    );
  }

  for (const [method, action] of [
    ['GET', 'ConfigRead'],
    ['PUT', 'CompetencyManage'],
  ] as const) {
    app.route({
      method,
      url: '/competencies/:id/config',
      config: { action, ...(method === 'PUT' ? { audit: 'agents' as const } : {}) },
      schema: {
        tags: TAGS,
        summary: 'Deprecated: always 410 (settings are per agent: /agents/{id}/competencies/{cid}/config)',
        params: CompetencyIdParams,
        response: { 410: DeprecatedCompetencyConfig },
      },
      handler: async (_request, reply) => reply.code(410).send(DEPRECATED),
    });
  }

  agentCompetencyRoutes(app, deps, competencies);
};
