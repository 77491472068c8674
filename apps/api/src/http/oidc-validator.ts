import { ROLES, type PlatformConfig, type Role } from '@agent-platform/contracts';
import type { Clock } from '@agent-platform/domain';
import { createTokenValidator, type TokenValidator } from '@agent-platform/oidc';

type OidcSettings = PlatformConfig['auth']['oidc'];

/** The api's one token validator, following the running config. */
export interface OidcValidatorHolder {
  /** The validator of the current `[auth.oidc]`: the same instance (and JWKS cache) while the settings are unchanged. */
  current(settings: OidcSettings): TokenValidator<Role>;
}

/**
 * Builds the api's token validator (libs/oidc, the one the registry's issuers use too) from
 * `[auth.oidc]`, and builds it again only when those settings change (POST /config/reload): an
 * unchanged reload keeps the cached signing keys and the refetch cooldown.
 */
export function createOidcValidatorHolder(clock: Clock): OidcValidatorHolder {
  let built: { key: string; validator: TokenValidator<Role> } | null = null;
  return {
    current(settings) {
      const key = JSON.stringify(settings);
      if (built?.key !== key) {
        const validator = createTokenValidator<Role>(
          {
            issuer: settings.issuer,
            audience: settings.audience,
            jwks_uri: settings.jwks_uri,
            role_claim: settings.role_claim,
            allowed_algorithms: settings.allowed_algorithms,
            role_mapping: settings.role_mapping,
            jwks_cache_ttl_secs: settings.jwks_cache_ttl_secs,
          },
          {
            roles: ROLES,
            clockToleranceSecs: settings.clock_tolerance_secs,
            refetchCooldownSecs: settings.refetch_cooldown_secs,
            now: () => clock.now(),
          },
        );
        built = { key, validator };
      }
      return built.validator;
    },
  };
}
