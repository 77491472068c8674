import {
  ErrorEnvelope,
  IntegrationActionResult,
  IntegrationIdParams,
  IntegrationInstallBody,
  IntegrationInstallResult,
  IntegrationList,
  IntegrationStatusView,
  IntegrationToolList,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import { MANAGE_ERRORS } from '../http/error-responses.ts';
import type { RoutePlugin } from '../api-app.ts';

/**
 * Spec §Integrations and contracts: the integration routes (docs/integrations.md). Reads take
 * IntegrationRead, changes IntegrationManage and are audited under `integrations` (path and
 * status only: the audit and the request log never carry a body, so the install `key` is in
 * neither). The api runs no server itself: connect records the desired state and waits for the
 * agent workers (docs/integrations.md "Fleet").
 */
const TAGS = ['integrations'];
// 403 is either the role check's flat body or PermissionDenied in the envelope.
const Failures = MANAGE_ERRORS;
const manage = { action: 'IntegrationManage', audit: 'integrations' } as const;

export const integrationRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/integrations',
    {
      config: { action: 'IntegrationRead' },
      schema: {
        tags: TAGS,
        summary: 'Installed integrations with their fleet status',
        response: { 200: IntegrationList },
      },
    },
    async () => ({ integrations: await deps.integrations.list() }),
  );

  app.post(
    '/integrations/install',
    {
      // It names a program the agent workers start, from a directory, unsigned: admin only (docs/integrations.md).
      config: { action: 'IntegrationInstall', audit: 'integrations' },
      schema: {
        tags: TAGS,
        summary:
          'Install an integration package from a local directory; `key` goes to the vault, never shown',
        body: IntegrationInstallBody,
        response: { 201: IntegrationInstallResult, ...Failures },
      },
    },
    async (request, reply) => {
      const { name: path, key } = request.body;
      const name = await deps.integrations.install({ path, ...(key === undefined ? {} : { key }) });
      return reply.code(201).send({ status: 'installed', name });
    },
  );

  app.delete(
    '/integrations/:id',
    {
      config: manage,
      schema: {
        tags: TAGS,
        summary: 'Uninstall (403 while Running agents depend on it)',
        params: IntegrationIdParams,
        response: { 204: Type.Null({ description: 'Removed.' }), ...Failures },
      },
    },
    async (request, reply) => {
      await deps.integrations.remove(request.params.id);
      return reply.code(204).send(null);
    },
  );

  const action = (verb: 'connect' | 'disconnect' | 'reconnect', summary: string) =>
    app.post(
      `/integrations/:id/${verb}`,
      {
        config: manage,
        schema: {
          tags: TAGS,
          summary,
          params: IntegrationIdParams,
          response: { 200: IntegrationActionResult, ...Failures },
        },
      },
      async (request) => {
        await deps.integrations[verb](request.params.id);
        return {
          status: verb === 'disconnect' ? ('disconnected' as const) : ('connected' as const),
          id: request.params.id,
        };
      },
    );
  action('connect', 'Start its server on every agent worker (waits up to [integrations] connect_wait_secs)');
  action('disconnect', 'Stop its server everywhere (403 while Running agents depend on it)');
  action('reconnect', 'Restart its server everywhere (403 while Running agents depend on it)');

  app.get(
    '/integrations/:id/status',
    {
      config: { action: 'IntegrationRead' },
      schema: {
        tags: TAGS,
        summary: 'Fleet status',
        params: IntegrationIdParams,
        response: { 200: IntegrationStatusView, 404: ErrorEnvelope },
      },
    },
    async (request) => ({ id: request.params.id, status: await deps.integrations.status(request.params.id) }),
  );

  app.get(
    '/integrations/:id/tools',
    {
      config: { action: 'IntegrationRead' },
      schema: {
        tags: TAGS,
        summary: 'Live tool list',
        params: IntegrationIdParams,
        response: { 200: IntegrationToolList, 404: ErrorEnvelope, 500: ErrorEnvelope },
      },
    },
    async (request) => ({ id: request.params.id, tools: await deps.integrations.tools(request.params.id) }),
  );
};
