import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from 'typebox';
import type { ApiApp } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';
import { DOCS_PREFIX } from './route-catalog.ts';

/**
 * OpenAPI 3.1 document generated from the route schemas (so it cannot drift from what is
 * validated), served at GET /openapi.json, with Swagger UI at /docs. Both need a credential
 * like every route but /health. Must be registered before the routes it describes.
 */
export async function installOpenApi(app: ApiApp, deps: ApiDeps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Platform API',
        version: deps.version,
        description: 'Send `Api-Version: v1`. Every route except GET /health needs `Authorization: Bearer <API key>` unless auth is disabled.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX });
  app.get(
    '/openapi.json',
    {
      config: { action: 'authenticated' },
      schema: {
        hide: true,
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI 3.1 document.' }) },
      },
    },
    async () => app.swagger() as unknown as Record<string, unknown>,
  );
}
