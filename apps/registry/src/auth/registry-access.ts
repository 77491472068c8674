import type { RegistryRole } from '@agent-platform/contracts';
import type { RegistryActor } from '@agent-platform/registry-core';

/**
 * What a registry route declares in `config.registryAccess`, read by the registry's auth hook
 * (docs/registry.md "Roles and access"):
 * - `public`: no identity ever needed (/health, /signing-key, /taxonomy, /regions).
 * - `read`: metadata reads; anonymous callers allowed unless `[registry.auth] read_requires_auth`.
 * - `download`: archive downloads; anonymous allowed unless `download_requires_auth`.
 * - `authenticated`: any identity (/auth/whoami).
 * - `publish`: role `publisher` or `registry-admin` (ownership is checked by the registry service).
 * - `admin`: role `registry-admin` (permission `registry:admin`: keys, issuers, owners of any package).
 */
export type RegistryAccess = 'public' | 'read' | 'download' | 'authenticated' | 'publish' | 'admin';

/** Who is calling the registry. In mode `disabled` every caller is `ANONYMOUS_REGISTRY_ADMIN`. */
export interface RegistryCaller {
  identity: string;
  role: RegistryRole;
  key_id: string | null;
  /** The OIDC issuer of a token; null for a registry key or anonymous. */
  issuer: string | null;
  authenticated: boolean;
  /** A publisher token's limits (docs/registry-auth.md "Tokens"): it acts as `identity` for these only. */
  grant?: RegistryActor['grant'];
}

/** The caller as the package service sees it: identity, role and, for a token, its limits. */
export function actorOf(caller: RegistryCaller): RegistryActor {
  return caller.grant === undefined ? { identity: caller.identity, role: caller.role } : { identity: caller.identity, role: caller.role, grant: caller.grant };
}

export const ANONYMOUS_REGISTRY_ADMIN: RegistryCaller = {
  identity: 'anonymous',
  role: 'registry-admin',
  key_id: null,
  issuer: null,
  authenticated: false,
};

/** An anonymous reader: a `read` or `download` route while identity is not required. */
export const ANONYMOUS_READER: RegistryCaller = { identity: 'anonymous', role: 'reader', key_id: null, issuer: null, authenticated: false };

declare module 'fastify' {
  interface FastifyContextConfig {
    registryAccess?: RegistryAccess;
  }
  interface FastifyRequest {
    /** Set by the registry auth hook before the handler runs. */
    registryCaller: RegistryCaller;
  }
}
