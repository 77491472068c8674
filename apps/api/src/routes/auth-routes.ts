import {
  ApiKeyList,
  AuthCheck,
  CreateKeyBody,
  FlatError,
  IssuedApiKey,
  KeyIdParams,
  KeyRevoked,
  LoggedOut,
  RotateKeyBody,
  WhoAmI,
  type PlatformConfig,
} from '@agent-platform/contracts';
import { bootstrapFirstKey, Errors } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';

const TAGS = ['auth'];
const KEY_ROUTE = { action: 'KeyManagement', audit: 'keys' } as const;
const KEY_ID = { id: 'key' };
const NOT_ENABLED = { error: 'Auth is not enabled' } as const;

/**
 * True when a local key store exists: mode `local`, or `oidc` with `allow_local_service_keys`
 * (spec §Endpoints "Authentication and keys"). Otherwise key routes answer 503 with a flat body.
 */
function keyStoreEnabled(auth: PlatformConfig['auth']): boolean {
  return auth.mode === 'local' || (auth.mode === 'oidc' && auth.allow_local_service_keys);
}

/**
 * Spec §Endpoints "Authentication and keys". Authentication itself, the bootstrap bypass, the
 * role check, key-id validation and auditing are the shared hooks' work (see route-config.ts);
 * these handlers only call the key service and shape the answer.
 */
export const authRoutes: RoutePlugin = (app, deps) => {
  const enabled = (): boolean => keyStoreEnabled(deps.config.current().auth);

  app.post(
    '/auth/logout',
    {
      config: { action: 'authenticated', audit: 'auth' },
      schema: { tags: TAGS, summary: 'Log out (API keys are bearer tokens: no server-side effect)', response: { 200: LoggedOut } },
    },
    async () => ({ status: 'logged_out' as const }),
  );

  app.get(
    '/auth/check',
    {
      config: { action: 'authenticated' },
      schema: { tags: TAGS, summary: 'Whether the request is authenticated, and as whom', response: { 200: AuthCheck } },
    },
    async (request) => ({
      // Any request reaching a handler passed authentication; a bad credential was a 401 already.
      authenticated: true,
      auth_required: request.caller.authenticated,
      identity: request.caller.identity,
      role: request.caller.role,
    }),
  );

  app.get(
    '/auth/whoami',
    {
      config: { action: 'authenticated' },
      schema: { tags: TAGS, summary: 'The caller: identity, role and key id (and, for an OIDC access token, its issuer and subject)', response: { 200: WhoAmI } },
    },
    async (request) => {
      const { identity, role, key_id: keyId, external } = request.caller;
      return { identity, role, key_id: keyId, ...(external === undefined ? {} : { issuer: external.issuer, subject: external.subject }) };
    },
  );

  app.post(
    '/auth/keys',
    {
      config: { ...KEY_ROUTE, bootstrap: true },
      schema: {
        tags: TAGS,
        summary: 'Create an API key (without a credential while no key exists yet); the secret is shown once',
        body: CreateKeyBody,
        response: { 200: IssuedApiKey, 503: FlatError },
      },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      if (request.caller.identity !== 'bootstrap' || request.caller.authenticated) return deps.keys.create(request.body);
      // The bootstrap caller passed because the store looked empty when its headers arrived; its
      // body may have come much later. Decided again now, under the claim (issue "Hardening" 5).
      const first = await bootstrapFirstKey(deps, () => deps.keys.create(request.body));
      if (first === null) throw Errors.unauthenticated('authentication required: the first key already exists; send Authorization: Bearer <API key>');
      return first;
    },
  );

  app.get(
    '/auth/keys',
    {
      config: KEY_ROUTE,
      schema: { tags: TAGS, summary: 'List API keys (never their secrets)', response: { 200: ApiKeyList, 503: FlatError } },
    },
    async (_request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      return { keys: await deps.keys.list() };
    },
  );

  app.delete(
    '/auth/keys/:id',
    {
      config: { ...KEY_ROUTE, ids: KEY_ID },
      schema: {
        tags: TAGS,
        summary: 'Revoke an API key, effective immediately',
        params: KeyIdParams,
        response: { 200: KeyRevoked, 503: FlatError },
      },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      await deps.keys.revoke(request.params.id);
      return { status: 'revoked' as const, id: request.params.id };
    },
  );

  app.post(
    '/auth/keys/:id/rotate',
    {
      config: { ...KEY_ROUTE, ids: KEY_ID },
      schema: {
        tags: TAGS,
        summary: 'Revoke an API key and issue a new one with the same name, role and expiry policy',
        params: KeyIdParams,
        body: RotateKeyBody,
        response: { 200: IssuedApiKey, 503: FlatError },
      },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      const expiresIn = request.body.expires_in;
      return deps.keys.rotate(request.params.id, expiresIn === undefined ? {} : { expires_in: expiresIn });
    },
  );
};
