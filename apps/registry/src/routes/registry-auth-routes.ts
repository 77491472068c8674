import { issuerRoutes } from './issuer-routes.ts';
import { registryKeyRoutes } from './registry-key-routes.ts';
import type { RegistryRoutePlugin } from './registry-route.ts';

/** Every route of the registry's auth: `/auth/whoami`, `/keys...`, `/admin/issuers...` (docs/registry-auth.md). */
export const registryAuthRoutes: RegistryRoutePlugin = async (app, deps) => {
  await registryKeyRoutes(app, deps);
  await issuerRoutes(app, deps);
};
