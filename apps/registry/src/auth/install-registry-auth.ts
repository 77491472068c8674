import { Errors } from '@agent-platform/domain';
import type { RegistryApp } from '../registry-app.ts';
import type { RegistryRouteDeps } from '../routes/registry-route.ts';
import { ANONYMOUS_REGISTRY_ADMIN } from './registry-access.ts';

/**
 * Sets `request.registryCaller` before every registry route (docs/registry-auth.md). PLACEHOLDER
 * until the registry auth work lands: mode `disabled` only (every caller the anonymous registry
 * admin); modes `local` and `oidc` refuse every non-public request with 401.
 */
export function installRegistryAuth(app: RegistryApp, deps: RegistryRouteDeps): void {
  app.decorateRequest('registryCaller', null as never);
  app.addHook('onRequest', async (request) => {
    const mode = deps.settings().auth.mode;
    if (mode === 'disabled' || request.routeOptions.config.registryAccess === 'public') {
      request.registryCaller = ANONYMOUS_REGISTRY_ADMIN;
      return;
    }
    throw Errors.unauthenticated(`registry auth mode ${mode} is not available in this build`);
  });
}
