import { Issuer, IssuerBody, IssuerList } from '@agent-platform/contracts';
import { Type } from 'typebox';
import { registryAuthServicesFor } from '../auth/registry-auth-services.ts';
import type { RegistryAuthRoutePlugin } from './registry-route.ts';

const TAGS = ['registry-auth'];
const ADMIN = { registryAccess: 'admin' } as const;
const IssuerParams = Type.Object({ id: Type.String({ description: 'Issuer id (UUID).' }) });

/**
 * `/admin/issuers` (spec §Registry surface, permission `registry:admin` = role registry-admin;
 * docs/registry-auth.md "Issuers"). A change is effective on the next request (issuer-validators.ts).
 */
export const issuerRoutes: RegistryAuthRoutePlugin = (app, deps) => {
  const { issuers } = registryAuthServicesFor(deps);

  app.get('/admin/issuers', { config: ADMIN, schema: { tags: TAGS, summary: 'The registered OIDC issuers', response: { 200: IssuerList } } }, async () => ({
    issuers: await issuers.list(),
  }));

  app.post(
    '/admin/issuers',
    { config: ADMIN, schema: { tags: TAGS, summary: 'Register an OIDC issuer; its tokens are accepted from the next request', body: IssuerBody, response: { 201: Issuer } } },
    async (request, reply) => reply.code(201).send(await issuers.create(request.body)),
  );

  app.get(
    '/admin/issuers/:id',
    { config: ADMIN, schema: { tags: TAGS, summary: 'One registered issuer', params: IssuerParams, response: { 200: Issuer } } },
    async (request) => issuers.get(request.params.id),
  );

  app.put(
    '/admin/issuers/:id',
    { config: ADMIN, schema: { tags: TAGS, summary: 'Replace an issuer; effective from the next request', params: IssuerParams, body: IssuerBody, response: { 200: Issuer } } },
    async (request) => issuers.replace(request.params.id, request.body),
  );

  app.delete(
    '/admin/issuers/:id',
    { config: ADMIN, schema: { tags: TAGS, summary: 'Remove an issuer; its tokens are refused from the next request', params: IssuerParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await issuers.delete(request.params.id);
      return reply.code(204).send(null);
    },
  );
};
