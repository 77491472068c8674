import type { Role } from '@agent-platform/contracts';

/**
 * Who is calling. `key_id` is null for the anonymous caller of auth mode `disabled`. Generic over
 * the role set so that the registry's keys (roles REGISTRY_ROLES) share the key service.
 */
export interface Caller<R extends string = Role> {
  identity: string;
  role: R;
  key_id: string | null;
  /** True when a real credential was presented and accepted. */
  authenticated: boolean;
  /** Set for the caller of an OIDC access token (auth mode `oidc`): who the provider says it is. */
  external?: { issuer: string; subject: string };
}

export const ANONYMOUS_ADMIN: Caller = { identity: 'anonymous', role: 'admin', key_id: null, authenticated: false };
