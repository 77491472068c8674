import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyContextConfig } from 'fastify';
import { Type } from 'typebox';
import type { ApiApp } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';
import { DOCS_PREFIX } from './route-catalog.ts';

/** What one surface's OpenAPI document says about itself. */
export interface OpenApiDocumentOptions {
  title: string;
  version: string;
  description: string;
  /** `config` of GET /openapi.json: its access level on that surface. */
  routeConfig: FastifyContextConfig;
  /** Swagger UI under this prefix; none when absent. */
  uiPrefix?: string;
}

/**
 * OpenAPI 3.1 document generated from the route schemas (so it cannot drift from what is
 * validated), served at GET /openapi.json. Shared by every HTTP surface (the api, the registry).
 * Must be registered before the routes it describes.
 */
export async function installOpenApiDocument(app: ApiApp, options: OpenApiDocumentOptions): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: options.title, version: options.version, description: options.description },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transformObject: (document) =>
      'openapiObject' in document ? defaultedParamsOptional(document.openapiObject) : document.swaggerObject,
  });
  if (options.uiPrefix !== undefined) {
    // The page's requests ("Try it out") carry the key entered under Authorize.
    await app.register(swaggerUi, { routePrefix: options.uiPrefix, uiConfig: { tryItOutEnabled: true } });
  }
  app.get(
    '/openapi.json',
    {
      config: options.routeConfig,
      schema: {
        hide: true,
        response: {
          200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI 3.1 document.' }),
        },
      },
    },
    async () => app.swagger() as unknown as Record<string, unknown>,
  );
}

/**
 * A query or header parameter whose schema has a `default` may be left out: the validator
 * fills the default in before it checks `required` (validator-compiler.ts). TypeBox lists such a
 * property as required all the same (`Type.Integer({default: 50})`), so without this the document
 * would tell clients, the generated one in libs/client included, to send `limit` on every
 * `GET /security/audit`.
 */
function defaultedParamsOptional<D extends object>(document: D): D {
  const paths = (document as { paths?: Record<string, Record<string, unknown> | undefined> }).paths;
  for (const item of Object.values(paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      const parameters = (operation as { parameters?: unknown } | undefined)?.parameters;
      if (!Array.isArray(parameters)) continue;
      for (const parameter of parameters as {
        in?: string;
        required?: boolean;
        schema?: { default?: unknown };
      }[]) {
        if (parameter.in !== 'path' && parameter.schema?.default !== undefined) parameter.required = false;
      }
    }
  }
  return document;
}

/**
 * The api's document, with Swagger UI at /docs. GET /openapi.json needs a credential like every
 * route but /health; the UI (and its copy of the document at /docs/json) is public, its Authorize
 * button takes the key the requests it sends then carry.
 */
export async function installOpenApi(app: ApiApp, deps: ApiDeps): Promise<void> {
  await installOpenApiDocument(app, {
    title: 'Agent Platform API',
    version: deps.version,
    description:
      'Send `Api-Version: v1`. Every route except GET /health needs `Authorization: Bearer <API key>` unless auth is disabled.',
    routeConfig: { action: 'authenticated' },
    uiPrefix: DOCS_PREFIX,
  });
}
