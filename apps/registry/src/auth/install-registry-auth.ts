import type { PlatformConfig } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import { claimedIssuer, isTokenRejected } from '@agent-platform/oidc';
import { keyIdentity, REGISTRY_KEY_PREFIX, REGISTRY_TOKEN_PREFIX, tokenIdentity } from '@agent-platform/registry-core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RegistryApp } from '../registry-app.ts';
import type { RegistryAuthDeps } from '../routes/registry-route.ts';
import { ANONYMOUS_READER, ANONYMOUS_REGISTRY_ADMIN, type RegistryAccess, type RegistryCaller } from './registry-access.ts';
import { registryAuthServicesFor, type RegistryAuthServices } from './registry-auth-services.ts';
import { accessOf, roleRefusal } from './registry-role-check.ts';
import { failedAttempt } from './failed-attempt.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `POST /keys`: open without a credential while no registry key exists (the bootstrap rule). */
    registryBootstrap?: boolean;
  }
}

type RegistryAuthSettings = PlatformConfig['registry']['auth'];

/** The caller of the bootstrap request: creates the first key, nothing else. */
export const REGISTRY_BOOTSTRAP_CALLER: RegistryCaller = { identity: 'bootstrap', role: 'registry-admin', key_id: null, issuer: null, authenticated: false };

type Failure = 'missing' | 'malformed' | 'invalid_key' | 'invalid_publisher_token' | 'keys_not_accepted' | 'invalid_token';

/**
 * Sets `request.registryCaller` before every registry route, or answers 401, 403 or 429
 * (docs/registry-auth.md). An onRequest hook: it runs before the body is read (an unauthorized
 * caller never sees 415 or 422) and for unmatched URLs too.
 *
 * - mode `disabled`: everyone is the anonymous registry admin (the boot gate keeps this on loopback).
 * - a `public` route: no credential is read.
 * - no credential: an anonymous reader on `read`/`download` routes unless `read_requires_auth` /
 *   `download_requires_auth`; the bootstrap caller on `POST /keys` while no key exists; else 401.
 * - a credential: it must be valid, whatever the route would have allowed anonymously (a bad
 *   credential is never downgraded to anonymous): `reg_sk_` keys in mode `local` (and in `oidc`
 *   with `allow_local_keys`), publishers' own `reg_pt_` tokens in either mode (acting as their
 *   maker within their scopes), JWTs of a registered issuer in mode `oidc`. Invalid: 401, counted
 *   towards the client's lockout (429 while locked out).
 * - then the role: `publish` needs publisher or registry-admin, `admin` registry-admin: else 403.
 */
export function installRegistryAuth(app: RegistryApp, deps: RegistryAuthDeps): void {
  const services = registryAuthServicesFor(deps);
  app.decorateRequest('registryCaller', null as never);
  app.addHook('onRequest', async (request, reply) => {
    const settings = deps.settings().auth;
    const access = accessOf(request);
    if (settings.mode === 'disabled') {
      request.registryCaller = ANONYMOUS_REGISTRY_ADMIN;
      return;
    }
    if (access === 'public') {
      request.registryCaller = ANONYMOUS_READER;
      return;
    }
    const caller = await identify(request, reply, access, settings, services, deps);
    if (caller === null) return reply;
    request.registryCaller = caller;
    const refusal = roleRefusal(caller, access);
    if (refusal !== null) return reply.code(403).send({ error: 'forbidden', message: refusal });
    return undefined;
  });
}

/** The caller, or null once the reply was sent (403 for a valid token without a mapped role). */
async function identify(
  request: FastifyRequest,
  reply: FastifyReply,
  access: RegistryAccess,
  settings: RegistryAuthSettings,
  services: RegistryAuthServices,
  deps: RegistryAuthDeps,
): Promise<RegistryCaller | null> {
  const header = request.headers.authorization;
  if (header === undefined || header.trim() === '') {
    if (access === 'read' && !settings.read_requires_auth) return ANONYMOUS_READER;
    if (access === 'download' && !settings.download_requires_auth) return ANONYMOUS_READER;
    if (request.routeOptions.config.registryBootstrap === true && keysAccepted(settings) && (await services.keys.isEmpty())) return REGISTRY_BOOTSTRAP_CALLER;
    return refuse(request, services, deps, settings, 'missing');
  }
  const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (token === undefined) return refuse(request, services, deps, settings, 'malformed');
  if (token.startsWith(REGISTRY_TOKEN_PREFIX)) {
    // A publisher's own token, in any mode that has identities: it acts as its maker, within its grant.
    const grant = await services.tokens.authenticate(token);
    if (grant === null) return refuse(request, services, deps, settings, 'invalid_publisher_token');
    return {
      identity: grant.identity,
      role: 'publisher',
      key_id: grant.token_id,
      // A trusted-publishing token: its CI token's issuer (and it may only publish, registry-context.ts).
      issuer: grant.trusted?.issuer ?? null,
      authenticated: true,
      grant: { scopes: grant.scopes, packages: grant.packages, ...(grant.trusted === undefined ? {} : { trusted: grant.trusted }) },
    };
  }
  if (token.startsWith(REGISTRY_KEY_PREFIX) || settings.mode === 'local') {
    if (!keysAccepted(settings)) return refuse(request, services, deps, settings, 'keys_not_accepted');
    const key = await services.keys.authenticate(token);
    if (key === null) return refuse(request, services, deps, settings, 'invalid_key');
    // Qualified (docs/registry-auth.md "Identities"): a key named alice is not a token's subject alice.
    return { ...key, identity: keyIdentity(key.identity), issuer: null };
  }
  try {
    const validated = await services.validators.validate(token);
    return { identity: tokenIdentity(validated.issuer, validated.identity), role: validated.role, key_id: null, issuer: validated.issuer, authenticated: true };
  } catch (error) {
    if (!isTokenRejected(error)) throw error;
    if (error.reason === 'no_role') {
      // A valid identity the registry grants nothing: a role failure (403), not a bad credential.
      void reply.code(403).send({ error: 'forbidden', message: error.message });
      return null;
    }
    if (error.reason === 'keys_unavailable') throw Errors.identityProvider(claimedIssuer(token) ?? 'unknown', error.message);
    return refuse(request, services, deps, settings, 'invalid_token', error.message);
  }
}

function keysAccepted(settings: RegistryAuthSettings): boolean {
  return settings.mode === 'local' || (settings.mode === 'oidc' && settings.allow_local_keys);
}

function credentialName(settings: RegistryAuthSettings): string {
  if (settings.mode === 'local') return 'registry key';
  return settings.allow_local_keys ? 'access token or registry key' : 'access token';
}

/** A failed attempt: 429 while the client is locked out (not counted again), else counted, logged (never the credential), 401. */
async function refuse(
  request: FastifyRequest,
  services: RegistryAuthServices,
  deps: RegistryAuthDeps,
  settings: RegistryAuthSettings,
  failure: Failure,
  detail?: string,
): Promise<never> {
  return failedAttempt(request, { backoff: services.backoff, logger: deps.logger }, failure, message(failure, credentialName(settings), detail));
}

function message(failure: Failure, credential: string, detail: string | undefined): string {
  switch (failure) {
    case 'missing':
      return `authentication required: send Authorization: Bearer <${credential}>`;
    case 'malformed':
      return `malformed Authorization header: expected Bearer <${credential}>`;
    case 'invalid_key':
      return 'invalid, revoked or expired registry key';
    case 'invalid_publisher_token':
      return 'invalid, revoked or expired registry token (a token of a registry key stops with that key)';
    case 'keys_not_accepted':
      return 'registry keys are not accepted here ([registry.auth] allow_local_keys = false): send an access token';
    case 'invalid_token':
      return `invalid access token: ${detail ?? 'refused'}`;
  }
}
