import { ANONYMOUS_ADMIN, Errors, KEY_SECRET_PREFIX, type Caller } from '@agent-platform/domain';
import type { FastifyRequest } from 'fastify';
import type { ApiDeps } from '../deps.ts';
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

const MESSAGES = {
  missing: 'authentication required: send Authorization: Bearer <API key>',
  malformed: 'malformed Authorization header: expected Bearer <API key>',
  invalid: 'invalid, revoked or expired API key',
} as const;

/**
 * Sets `request.caller` or rejects with 401 (spec §Authentication rules 1-3, D7). Runs as an
 * onRequest hook, which Fastify also runs for unmatched URLs before the not-found handler, so an
 * unknown path without a credential is 401, not 404. A valid credential is always served; only a
 * failed attempt meets the lockout (docs/permissions.md "Failed attempts and lockouts"): from a
 * client locked out by repeated failures it is answered 429, else it is audited (never the
 * token), counted towards the lockout and answered 401. The client is `request.clientAddress`
 * (the peer, or the client a trusted proxy names).
 */
export function authenticateHook(deps: ApiDeps) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const route = request.routeOptions.config;
    if (route.action === 'public') {
      request.caller = PUBLIC_CALLER;
      return;
    }
    const auth = deps.config.current().auth;
    if (auth.mode === 'disabled') {
      request.caller = ANONYMOUS_ADMIN;
      return;
    }
    const header = request.headers.authorization;
    if (route.bootstrap === true && header === undefined && (await deps.keys.isEmpty())) {
      request.caller = BOOTSTRAP_CALLER;
      return;
    }
    const bearer = bearerOf(header);
    if ('reason' in bearer) return refuse(deps, request, bearer.reason);
    // libs/config refuses mode oidc in this build; should it pass, only local keys (when allowed)
    // are ever accepted, never an unverified token.
    const keysAccepted = auth.mode === 'local' || auth.allow_local_service_keys;
    const isKey = bearer.token.startsWith(KEY_SECRET_PREFIX);
    const caller = isKey && keysAccepted ? await deps.keys.authenticate(bearer.token) : null;
    if (caller !== null) {
      request.caller = caller;
      return;
    }
    return refuse(deps, request, 'invalid');
  };
}

/** A failed attempt: 429 while its client is locked out (not counted again), else counted, audited, 401. */
async function refuse(deps: ApiDeps, request: FastifyRequest, reason: keyof typeof MESSAGES): Promise<never> {
  const client = request.clientAddress;
  const lockedFor = await deps.authBackoff.lockedFor(client);
  if (lockedFor > 0) {
    deps.metrics.authFailuresTotal.inc({ reason: 'locked_out' });
    throw Errors.rateLimited(`too many failed authentication attempts from ${client}: retry in ${lockedFor} s`, lockedFor);
  }
  deps.metrics.authFailuresTotal.inc({ reason });
  await deps.authBackoff.recordFailure(client);
  await deps.audit.record({
    category: 'auth',
    identity: 'anonymous',
    role: 'none',
    action: `${request.method} ${routeLabel(request)}`,
    target: pathOf(request),
    result: 'failure',
    metadata: { reason, client_address: client, request_id: request.id },
  });
  throw Errors.unauthenticated(MESSAGES[reason]);
}
