import { createAuthBackoff, type AuthBackoff, type AuthBackoffSettings, type Clock } from '@agent-platform/domain';
import {
  createIssuerStore,
  createIssuerValidators,
  createRegistryKeyService,
  createRegistryTokenService,
  type IssuerStore,
  type IssuerValidators,
  type RegistryKeyService,
  type RegistryTokenService,
} from '@agent-platform/registry-core';
import type { Store } from '@agent-platform/store';

/** What the registry's auth hook and its auth routes share (docs/registry-auth.md). */
export interface RegistryAuthServices {
  keys: RegistryKeyService;
  /** Publishers' own scoped tokens (`/tokens`). */
  tokens: RegistryTokenService;
  issuers: IssuerStore;
  validators: IssuerValidators;
  backoff: AuthBackoff;
}

export interface RegistryAuthServicesDeps {
  store: Store;
  clock: Clock;
  /** Lockout after failed attempts; default the spec's example `[auth.rate_limit]` (1 s, 300 s, 10). */
  rateLimit?: () => AuthBackoffSettings;
  /** Issuer discovery and JWKS fetches to private addresses (`[network] allow_private_targets`); default refused. */
  allowPrivateTargets?: () => boolean;
}

/** The spec's example `[auth.rate_limit]` values (§Limits "Authentication backoff settings"). */
export const DEFAULT_REGISTRY_RATE_LIMIT: AuthBackoffSettings = { base_backoff_secs: 1, max_backoff_secs: 300, max_failed_attempts: 10 };

/** Failed registry attempts are counted apart from the api's, which may share the store. */
export const REGISTRY_AUTH_FAILURES_COLLECTION = 'registry_auth_failures';

export function createRegistryAuthServices(deps: RegistryAuthServicesDeps): RegistryAuthServices {
  const issuers = createIssuerStore(deps);
  const keys = createRegistryKeyService(deps);
  return {
    keys,
    tokens: createRegistryTokenService({
      ...deps,
      liveKeyNamed: (name) => keys.hasLiveKey(name),
    }),
    issuers,
    validators: createIssuerValidators(issuers, { clock: deps.clock, allowPrivateTargets: deps.allowPrivateTargets ?? (() => false) }),
    backoff: createAuthBackoff({
      store: deps.store,
      clock: deps.clock,
      settings: deps.rateLimit ?? (() => DEFAULT_REGISTRY_RATE_LIMIT),
      collection: REGISTRY_AUTH_FAILURES_COLLECTION,
    }),
  };
}

const shared = new WeakMap<Store, RegistryAuthServices>();

/**
 * The services a registry app uses: `deps.auth` when the composition root built them, else one
 * set per store, so that the hook and the routes share the same validators (and JWKS caches)
 * without the composition root having to build anything. Everything else they hold lives in
 * the store, so a second set would only cost a second JWKS fetch.
 */
export function registryAuthServicesFor(deps: {
  store: Store;
  clock: Clock;
  auth?: RegistryAuthServices | undefined;
  allowPrivateTargets?: (() => boolean) | undefined;
}): RegistryAuthServices {
  if (deps.auth !== undefined) return deps.auth;
  let services = shared.get(deps.store);
  if (services === undefined) {
    services = createRegistryAuthServices({
      store: deps.store,
      clock: deps.clock,
      ...(deps.allowPrivateTargets === undefined ? {} : { allowPrivateTargets: deps.allowPrivateTargets }),
    });
    shared.set(deps.store, services);
  }
  return services;
}
