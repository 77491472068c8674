import {
  AgentCompetencyList,
  AgentCompetencyParams,
  AgentIdParams,
  CompetencyConfigUpdated,
  CompetencyOrderBody,
  CompetencyScheduleReset,
  CompetencySettingsBody,
  CompetencySettingsView,
  ErrorEnvelope,
  ResetScheduleParams,
} from '@agent-platform/contracts';
import type { CompetencyService } from '@agent-platform/domain';
import { Type } from 'typebox';
import type { ApiApp } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';

/**
 * Spec §Endpoints "Competencies", the agent-scoped routes: equip order, per-agent settings, and
 * the reset of a scheduled competency's cron binding (docs/competencies.md). Registered by
 * competency-routes.ts over the same CompetencyService.
 */
const TAGS = ['competencies'];
const Errors4xx = { 400: ErrorEnvelope, 404: ErrorEnvelope };
// No JSON at all, not `null` (spec: 200 empty body), as POST /agents/{id}/activate.
const Empty = Type.Unknown({ description: 'Empty body (Content-Length: 0).' });

export function agentCompetencyRoutes(app: ApiApp, _deps: ApiDeps, competencies: CompetencyService): void {
  app.get(
    '/agents/:id/competencies',
    {
      config: { action: 'AgentList', ids: { id: 'agent' } },
      schema: {
        tags: TAGS,
        summary: "The agent's competency ids in equip order (its system prompt follows this order)",
        params: AgentIdParams,
        response: { 200: AgentCompetencyList, ...Errors4xx },
      },
    },
    async (request) => ({ competencies: await competencies.agentCompetencies(request.params.id) }),
  );

  app.put(
    '/agents/:id/competencies/order',
    {
      config: { action: 'CompetencyEquip', ids: { id: 'agent' }, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Reorder the equipped competencies: `order` must list each exactly once',
        params: AgentIdParams,
        body: CompetencyOrderBody,
        response: { 200: Empty, ...Errors4xx },
      },
    },
    async (request, reply) => {
      await competencies.reorder(request.params.id, request.body.order);
      return reply.code(200).send(undefined);
    },
  );

  app.get(
    '/agents/:id/competencies/:cid/config',
    {
      config: { action: 'ConfigRead', ids: { id: 'agent' } },
      schema: {
        tags: TAGS,
        summary: "The agent's values of the competency's settings (defaults filled) and the settings schema",
        params: AgentCompetencyParams,
        response: { 200: CompetencySettingsView, ...Errors4xx },
      },
    },
    async (request) => competencies.settings(request.params.id, request.params.cid),
  );

  app.put(
    '/agents/:id/competencies/:cid/config',
    {
      config: { action: 'CompetencyManage', ids: { id: 'agent' }, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary:
          'Set some of the settings for this agent (values as strings); validated against the schema, all or nothing',
        params: AgentCompetencyParams,
        body: CompetencySettingsBody,
        response: { 200: CompetencyConfigUpdated, ...Errors4xx },
      },
    },
    async (request) => {
      await competencies.updateSettings(request.params.id, request.params.cid, request.body);
      return { status: 'updated' as const };
    },
  );

  app.post(
    '/agents/:agent_id/competencies/:cid/reset-schedule',
    {
      config: { action: 'CompetencyManage', ids: { agent_id: 'agent' }, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: "Restore the agent's cron binding of the competency to its manifest schedule",
        params: ResetScheduleParams,
        response: { 200: CompetencyScheduleReset, ...Errors4xx, 500: ErrorEnvelope },
      },
    },
    async (request) => {
      await competencies.resetSchedule(request.params.agent_id, request.params.cid);
      return { status: 'reset' as const };
    },
  );
}
