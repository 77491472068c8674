import type { PlatformConfig } from '@agent-platform/contracts';
import { ANONYMOUS_ADMIN, Errors, KEY_SECRET_PREFIX, type Caller } from '@agent-platform/domain';
import { isTokenRejected } from '@agent-platform/oidc';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../deps.ts';
import { createOidcValidatorHolder, type OidcValidatorHolder } from './oidc-validator.ts';
import { pathOf, routeLabel } from './route-label.ts';

/** The caller of the public route (GET /health): no identity, and no role anything is granted to. */
const PUBLIC_CALLER: Caller = { identity: 'anonymous', role: 'viewer', key_id: null, authenticated: false };

/** Spec §Authentication rule 3: POST /auth/keys while the key store is empty. */
const BOOTSTRAP_CALLER: Caller = { identity: 'bootstrap', role: 'admin', key_id: null, authenticated: false };

/** The presented bearer token, or the reason there is none. */
function bearerOf(header: string | undefined): { token: string } | { reason: 'missing' | 'malformed' } {
  if (header === undefined || header.trim() === '') return { reason: 'missing' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] === undefined ? { reason: 'malformed' } : { token: match[1] };
}

type Failure = 'missing' | 'malformed' | 'invalid' | 'keys_not_accepted' | 'invalid_token';

/** What a client must send, by mode (named in every 401). */
function credentialName(auth: PlatformConfig['auth']): string {
  if (auth.mode !== 'oidc') return 'API key';
  return auth.allow_local_service_keys ? 'access token or API key' : 'access token';
}

function message(failure: Failure, auth: PlatformConfig['auth'], detail: string | undefined): string {
  switch (failure) {
    case 'missing':
      return `authentication required: send Authorization: Bearer <${credentialName(auth)}>`;
    case 'malformed':
      return `malformed Authorization header: expected Bearer <${credentialName(auth)}>`;
    case 'invalid':
      return 'invalid, revoked or expired API key';
    case 'keys_not_accepted':
      return 'API keys are not accepted here ([auth] mode = "oidc" with allow_local_service_keys = false): send an access token of the identity provider';
    case 'invalid_token':
      return `invalid access token: ${detail ?? 'refused'}`;
  }
}

/**
 * Sets `request.caller` or rejects with 401 (spec §Authentication rules 1-3, D7). Runs as an
 * onRequest hook, which Fastify also runs for unmatched URLs before the not-found handler, so an
 * unknown path without a credential is 401, not 404. A valid credential is always served; only a
 * failed attempt meets the lockout (docs/permissions.md "Failed attempts and lockouts"): from a
 * client locked out by repeated failures it is answered 429, else it is audited (never the
 * token), counted towards the lockout and answered 401. The client is `request.clientAddress`
 * (the peer, or the client a trusted proxy names).
 *
 * Mode `oidc` (docs/auth.md "OIDC"): a bearer starting `svc_sk_` is a local API key, accepted
 * only with `allow_local_service_keys`; anything else is a JWT for the one validator of
 * `[auth.oidc]`. A valid token whose roles map to none of the six roles is answered 403 (flat
 * body, not counted as a failed attempt); an identity provider whose keys cannot be fetched is
 * 502 ProviderError (retryable), as in the registry.
 */
export function authenticateHook(deps: ApiDeps) {
  const validators: OidcValidatorHolder = createOidcValidatorHolder(deps.clock);
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const route = request.routeOptions.config;
    if (route.action === 'public') {
      request.caller = PUBLIC_CALLER;
      return undefined;
    }
    const auth = deps.config.current().auth;
    if (auth.mode === 'disabled') {
      request.caller = ANONYMOUS_ADMIN;
      return undefined;
    }
    const keysAccepted = auth.mode === 'local' || auth.allow_local_service_keys;
    const header = request.headers.authorization;
    if (route.bootstrap === true && keysAccepted && header === undefined && (await deps.keys.isEmpty())) {
      request.caller = BOOTSTRAP_CALLER;
      return undefined;
    }
    const bearer = bearerOf(header);
    if ('reason' in bearer) return refuse(deps, request, auth, bearer.reason);
    if (bearer.token.startsWith(KEY_SECRET_PREFIX) || auth.mode === 'local') {
      if (!keysAccepted) return refuse(deps, request, auth, 'keys_not_accepted');
      const caller = await deps.keys.authenticate(bearer.token);
      if (caller === null) return refuse(deps, request, auth, 'invalid');
      request.caller = caller;
      return undefined;
    }
    try {
      const token = await validators.current(auth.oidc).validate(bearer.token);
      request.caller = {
        identity: `oidc:${token.identity}`,
        role: token.role,
        key_id: null,
        authenticated: true,
        external: { issuer: token.issuer, subject: token.identity },
      };
      return undefined;
    } catch (error) {
      if (!isTokenRejected(error)) throw error;
      if (error.reason === 'keys_unavailable') throw Errors.identityProvider(auth.oidc.issuer, error.message);
      if (error.reason === 'no_role') {
        // A valid identity granted nothing: a role failure (403, audited as access), not a bad credential.
        await deps.audit.record({
          category: 'access',
          identity: `oidc:${error.subject ?? 'unknown'}`,
          role: 'none',
          action: `${request.method} ${routeLabel(request)}`,
          target: pathOf(request),
          result: '403',
          metadata: { reason: 'no_mapped_role', request_id: request.id },
        });
        return reply.code(403).send({ error: 'forbidden', message: error.message });
      }
      return refuse(deps, request, auth, 'invalid_token', error.message, error.reason);
    }
  };
}

/** A failed attempt: 429 while its client is locked out (not counted again), else counted, audited, 401. */
async function refuse(
  deps: ApiDeps,
  request: FastifyRequest,
  auth: PlatformConfig['auth'],
  failure: Failure,
  detail?: string,
  tokenReason?: string,
): Promise<never> {
  const client = request.clientAddress;
  const lockedFor = await deps.authBackoff.lockedFor(client);
  if (lockedFor > 0) {
    deps.metrics.authFailuresTotal.inc({ reason: 'locked_out' });
    throw Errors.rateLimited(`too many failed authentication attempts from ${client}: retry in ${lockedFor} s`, lockedFor);
  }
  deps.metrics.authFailuresTotal.inc({ reason: failure });
  await deps.authBackoff.recordFailure(client);
  await deps.audit.record({
    category: 'auth',
    identity: 'anonymous',
    role: 'none',
    action: `${request.method} ${routeLabel(request)}`,
    target: pathOf(request),
    result: 'failure',
    metadata: { reason: failure, ...(tokenReason === undefined ? {} : { refusal: tokenReason }), client_address: client, request_id: request.id },
  });
  throw Errors.unauthenticated(message(failure, auth, detail));
}
