import type { RegistryRole } from '@agent-platform/contracts';
import type { FastifyRequest } from 'fastify';
import type { RegistryAccess, RegistryCaller } from './registry-access.ts';

/** Who may call a route of each access level, once identified (docs/registry-auth.md "Roles"). */
const ROLES_FOR: Record<RegistryAccess, readonly RegistryRole[] | 'any'> = {
  public: 'any',
  read: 'any',
  download: 'any',
  authenticated: 'any',
  publish: ['publisher', 'registry-admin'],
  admin: ['registry-admin'],
};

/**
 * The access level of the request's route. A route that declares none is `admin` (closed by
 * default, so a route added without thought is not open), except `GET /health`, which the spec
 * exempts from authentication (§Authentication rule 2); an unmatched URL is `read`, so that its
 * 404 is no more open than a metadata read.
 */
export function accessOf(request: FastifyRequest): RegistryAccess {
  if (request.is404) return 'read';
  const declared = request.routeOptions.config.registryAccess;
  if (declared !== undefined) return declared;
  return request.routeOptions.url === '/health' ? 'public' : 'admin';
}

/** The 403 message when the caller's role may not use the route, else null. */
export function roleRefusal(caller: RegistryCaller, access: RegistryAccess): string | null {
  const allowed = ROLES_FOR[access];
  if (allowed === 'any' || allowed.includes(caller.role)) return null;
  return `role ${caller.role} may not ${access === 'publish' ? 'publish or yank packages' : 'administer the registry'} (needs ${allowed.join(' or ')})`;
}
