import { RegistrySigningKey } from '@agent-platform/contracts';
import type { RegistryRoutePlugin } from './registry-route.ts';

/** `GET /signing-key` (spec §Registry surface): what platforms put in `[catalog] trusted_keys`. Public. */
export const signingKeyRoutes: RegistryRoutePlugin = (app, deps) => {
  app.get(
    '/signing-key',
    {
      config: { registryAccess: 'public' },
      schema: {
        tags: ['signing'],
        summary: "The registry's public Ed25519 signing key",
        response: { 200: RegistrySigningKey },
      },
    },
    async () => deps.packages.signingKey(),
  );
};
