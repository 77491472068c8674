import { ErrorEnvelope, SkillDetail, SkillIdParams, SkillInstallBody, SkillInstallResult, SkillList } from '@agent-platform/contracts';
import type { RoutePlugin } from '../api-app.ts';

/**
 * Skills (spec §Skills; docs/skills.md). Install goes through the catalog, so the package shows
 * in GET /catalog/installed and its dependencies install first; it is audited under `agents`
 * like a catalog install. Bundled skills are never listed but are shown by id.
 */
const TAGS = ['skills'];
const Failures = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 500: ErrorEnvelope };

export const skillRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/skills',
    {
      config: { action: 'AgentList' },
      schema: { tags: TAGS, summary: 'Installed skills (bundled skills are not listed)', response: { 200: SkillList } },
    },
    async () => ({ skills: await deps.skills.list() }),
  );

  app.post(
    '/skills/install',
    {
      config: { action: 'SkillInstall', audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Install a skill package from a local directory',
        body: SkillInstallBody,
        response: { 201: SkillInstallResult, ...Failures },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.skills.install(request.body.path)),
  );

  app.get(
    '/skills/:id',
    {
      config: { action: 'AgentList' },
      schema: {
        tags: TAGS,
        summary: 'An installed or bundled skill',
        params: SkillIdParams,
        response: { 200: SkillDetail, 404: ErrorEnvelope },
      },
    },
    async (request) => deps.skills.get(request.params.id),
  );
};
