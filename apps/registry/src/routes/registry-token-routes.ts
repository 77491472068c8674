import { FlatError, RegistryIssuedToken, RegistryToken, RegistryTokenCreateBody, RegistryTokenList } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import { Type } from 'typebox';
import type { RegistryCaller } from '../auth/registry-access.ts';
import { registryAuthServicesFor } from '../auth/registry-auth-services.ts';
import { registryAudit } from './registry-audit.ts';
import type { RegistryAuthRoutePlugin } from './registry-route.ts';

const TAGS = ['registry-auth'];
const NOT_ENABLED = { error: 'Auth is not enabled' } as const;
const TokenParams = Type.Object({ id: Type.String({ description: 'Registry token id (UUID).' }) });

/**
 * Publishers' own tokens (docs/registry-auth.md "Tokens"), as crates.io's API tokens: any
 * publisher (or registry admin) creates, lists and revokes tokens acting as itself, each limited to
 * scopes (publish-new, publish-update, yank, change-owners), package name patterns and an expiry.
 * The secret is shown once; the store keeps its hash. A token cannot make or revoke tokens (it
 * could otherwise widen itself). Creating and revoking are audited (category `keys`, never the
 * secret). Auth mode `disabled` has no identities: 503 as `/keys`.
 */
export const registryTokenRoutes: RegistryAuthRoutePlugin = (app, deps) => {
  const { tokens } = registryAuthServicesFor(deps);
  const enabled = () => deps.settings().auth.mode !== 'disabled';
  const record = registryAudit(deps);
  const audit = (caller: RegistryCaller, action: string, token: RegistryToken, result: string, metadata: Record<string, unknown>) =>
    record({
      category: 'keys',
      identity: caller.identity,
      role: caller.role,
      action,
      target: token.id,
      result,
      metadata,
    });
  const ownCredential = (caller: RegistryCaller, action: string) => {
    if (caller.grant !== undefined) throw Errors.permissionDenied(`a registry token may not ${action}: use your own registry key or access token`);
  };

  app.post(
    '/tokens',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: 'Create a token acting as the caller, limited to scopes, package patterns and an expiry; the secret is shown once',
        body: RegistryTokenCreateBody,
        response: { 201: RegistryIssuedToken, 503: FlatError },
      },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      const caller = request.registryCaller;
      ownCredential(caller, 'create tokens');
      const issued = await tokens.create(caller.identity, request.body);
      await audit(caller, 'registry.token.created', issued, '201', { name: issued.name, scopes: issued.scopes, packages: issued.packages, expires_at: issued.expires_at });
      return reply.code(201).send(issued);
    },
  );

  app.get(
    '/tokens',
    {
      config: { registryAccess: 'publish' },
      schema: { tags: TAGS, summary: "The caller's tokens (never their secrets), revoked ones included", response: { 200: RegistryTokenList, 503: FlatError } },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      return { tokens: await tokens.list(request.registryCaller.identity) };
    },
  );

  app.delete(
    '/tokens/:id',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: 'Revoke one of your tokens (a registry admin: any), effective on the next request',
        params: TokenParams,
        response: { 200: RegistryToken, 503: FlatError },
      },
    },
    async (request, reply) => {
      if (!enabled()) return reply.code(503).send(NOT_ENABLED);
      const caller = request.registryCaller;
      ownCredential(caller, 'revoke tokens');
      const revoked = await tokens.revoke(request.params.id, { identity: caller.identity, admin: caller.role === 'registry-admin' });
      await audit(caller, 'registry.token.revoked', revoked, '200', { name: revoked.name, token_identity: revoked.identity });
      return revoked;
    },
  );
};
