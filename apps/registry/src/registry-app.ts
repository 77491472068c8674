import Fastify, { LogController } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  installContentTypeParsers,
  installErrorHandling,
  installOpenApiDocument,
  validatorCompiler,
  type ApiApp,
} from '@agent-platform/api';
import type { Engines } from '@agent-platform/engines';
import { installRegistryAuth } from './auth/install-registry-auth.ts';
import './auth/registry-access.ts';
import { healthRoutes } from './routes/health-routes.ts';
import { packageChangeRoutes } from './routes/package-change-routes.ts';
import { packageRoutes } from './routes/package-routes.ts';
import { publishRoute } from './routes/publish-route.ts';
import type { RegistryRouteDeps, RegistryRoutePlugin } from './routes/registry-route.ts';
import { collectionRoutes } from './routes/collection-routes.ts';
import { registryAuthRoutes } from './routes/registry-auth-routes.ts';
import { revocationRoutes } from './routes/revocation-routes.ts';
import { searchRoutes } from './routes/search-routes.ts';
import { taxonomyRoutes } from './routes/taxonomy-routes.ts';
import { signingKeyRoutes } from './routes/signing-key-routes.ts';
import { readmeRoutes } from './routes/readme-routes.ts';
import { webRoutes } from './web/web-routes.ts';
import { teamRoutes } from './routes/team-routes.ts';
import { trustedPublishingRoutes } from './routes/trusted-publishing-routes.ts';

/** The same Fastify shape as the api's (TypeBox types from schemas to handlers). */
export type RegistryApp = ApiApp;

export interface RegistryAppDeps extends RegistryRouteDeps {
  /** Probed by /health, like the api's. */
  engines: Pick<Engines, 'store' | 'bus' | 'queue'>;
}

export interface BuildRegistryAppOptions {
  /**
   * Replaces `installRegistryAuth`. Tests only: it lets a test act as several identities without
   * registry keys (apps/registry/src/testing). Must set `request.registryCaller` on every request.
   */
  installAuth?: (app: RegistryApp, deps: RegistryRouteDeps) => void;
  /** Route groups after the standard ones. */
  routes?: readonly RegistryRoutePlugin[];
}

/** Every route group of the registry surface (spec §Registry surface; docs/registry.md lists each route). */
export const registryRoutePlugins: readonly RegistryRoutePlugin[] = [
  packageRoutes,
  publishRoute,
  packageChangeRoutes,
  signingKeyRoutes,
  revocationRoutes,
  searchRoutes,
  taxonomyRoutes,
  collectionRoutes,
  registryAuthRoutes,
  readmeRoutes,
  webRoutes,
  teamRoutes,
  trustedPublishingRoutes,
];

/**
 * The registry surface (spec §Registry surface, its own listener), built without listening
 * (tests use `inject`; service.ts listens). It shares the api's HTTP policy so that both surfaces
 * answer alike: one error handler (STYLE §3), the JSON-only content-type parsers (415/422), the
 * TypeBox validator (no coercion, unknown fields refused) and the OpenAPI generator. Order:
 * the auth hook (onRequest: 401, then the flat 403 of a role) runs before any route's body is
 * read, so an unauthorized caller never sees 413/415/422.
 */
export async function buildRegistryApp(
  deps: RegistryAppDeps,
  options: BuildRegistryAppOptions = {},
): Promise<RegistryApp> {
  const app = Fastify({
    loggerInstance: deps.logger,
    logController: new LogController({ disableRequestLogging: true }),
    // A version string may be long (pre-release identifiers); the router's default of 100 would answer 414.
    routerOptions: { maxParamLength: 256 },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as RegistryApp;
  app.setValidatorCompiler(validatorCompiler);
  installErrorHandling(app);
  installContentTypeParsers(app);
  (options.installAuth ?? installRegistryAuth)(app, deps);
  await installOpenApiDocument(app, {
    title: 'Agent Platform package registry',
    version: deps.version,
    description:
      'The package registry (docs/registry.md). Reads and downloads are anonymous unless the registry requires auth; publish, yank and owners need `Authorization: Bearer <registry key or token>` unless auth is disabled.',
    routeConfig: { registryAccess: 'public' },
  });
  for (const plugin of [healthRoutes(deps.engines), ...registryRoutePlugins, ...(options.routes ?? [])]) {
    await app.register(async (scope) => plugin(scope as RegistryApp, deps));
  }
  return app;
}
