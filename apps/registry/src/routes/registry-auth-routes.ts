import { issuerRoutes } from './issuer-routes.ts';
import { registryKeyRoutes } from './registry-key-routes.ts';
import { registryTokenRoutes } from './registry-token-routes.ts';
import type { RegistryAuthRoutePlugin } from './registry-route.ts';

/** Every route of the registry's auth: `/auth/whoami`, `/keys...`, `/tokens...`, `/admin/issuers...` (docs/registry-auth.md). */
export const registryAuthRoutes: RegistryAuthRoutePlugin = async (app, deps) => {
  await registryKeyRoutes(app, deps);
  await registryTokenRoutes(app, deps);
  await issuerRoutes(app, deps);
};
