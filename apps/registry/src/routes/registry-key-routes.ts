import { FlatError, RegistryIssuedKey, RegistryKey, RegistryKeyCreateBody, RegistryKeyList, RegistryWhoami, RotateKeyBody, type PlatformConfig } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import { Type } from 'typebox';
import { REGISTRY_BOOTSTRAP_CALLER } from '../auth/install-registry-auth.ts';
import { registryAuthServicesFor } from '../auth/registry-auth-services.ts';
import type { RegistryAuthRoutePlugin } from './registry-route.ts';

const TAGS = ['registry-auth'];
const NOT_ENABLED = { error: 'Auth is not enabled' } as const;
const KeyParams = Type.Object({ id: Type.String({ description: 'Registry key id (UUID).' }) });

/** A registry key store is in use: mode `local`, or `oidc` with `allow_local_keys` (else /keys is 503, as the api's /auth/keys). */
function keysEnabled(auth: PlatformConfig['registry']['auth']): boolean {
  return auth.mode === 'local' || (auth.mode === 'oidc' && auth.allow_local_keys);
}

/**
 * `GET /auth/whoami` and the registry key routes (spec §Registry surface; docs/registry-auth.md
 * "Keys"). Who may call them is the auth hook's work (install-registry-auth.ts): whoami needs an
 * identity, /keys needs registry-admin (or nobody, for the first key while none exists).
 */
export const registryKeyRoutes: RegistryAuthRoutePlugin = (app, deps) => {
  const { keys } = registryAuthServicesFor(deps);
  const enabled = () => keysEnabled(deps.settings().auth);

  app.get(
    '/auth/whoami',
    { config: { registryAccess: 'authenticated' }, schema: { tags: TAGS, summary: 'The caller: identity, role, key or issuer', response: { 200: RegistryWhoami } } },
    async (request) => {
      const { identity, role, authenticated, key_id, issuer } = request.registryCaller;
      return { identity, role, authenticated, key_id, issuer };
    },
  );

  app.post(
    '/keys',
    {
      config: { registryAccess: 'admin', registryBootstrap: true },
      schema: {
        tags: TAGS,
        summary: 'Create a registry key (without a credential while no key exists: the first must be registry-admin); the secret is shown once',
        body: RegistryKeyCreateBody,
        response: { 201: RegistryIssuedKey, 503: FlatError },
      },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      if (request.registryCaller !== REGISTRY_BOOTSTRAP_CALLER) return reply.code(201).send(await keys.create(request.body));
      // Open because the store looked empty when the headers arrived; decided again, under a claim, now.
      const first = await keys.bootstrap(request.body);
      if (first === null) throw Errors.unauthenticated('authentication required: the first registry key already exists; send Authorization: Bearer <registry key>');
      return reply.code(201).send(first);
    },
  );

  app.get(
    '/keys',
    { config: { registryAccess: 'admin' }, schema: { tags: TAGS, summary: 'List registry keys (never their secrets)', response: { 200: RegistryKeyList, 503: FlatError } } },
    async (_request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      return { keys: await keys.list() };
    },
  );

  app.delete(
    '/keys/:id',
    {
      config: { registryAccess: 'admin' },
      schema: { tags: TAGS, summary: 'Revoke a registry key, effective on the next request', params: KeyParams, response: { 200: RegistryKey, 503: FlatError } },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      return keys.revoke(request.params.id);
    },
  );

  app.post(
    '/keys/:id/rotate',
    {
      config: { registryAccess: 'admin' },
      schema: {
        tags: TAGS,
        summary: 'Revoke a registry key and issue a new secret with the same name, role and expiry policy',
        params: KeyParams,
        body: Type.Union([RotateKeyBody, Type.Null()]),
        response: { 200: RegistryIssuedKey, 503: FlatError },
      },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      const expiresIn = request.body?.expires_in;
      return keys.rotate(request.params.id, expiresIn === undefined ? {} : { expires_in: expiresIn });
    },
  );
};
