import type { RegistryRole } from '@agent-platform/contracts';
import { REGISTRY_ROLES } from '@agent-platform/contracts';
import type { Clock } from '@agent-platform/domain';
import { claimedIssuer, createTokenValidator, TokenRejectedError, type TokenValidator, type ValidatedToken, type VerifiedIdentity } from '@agent-platform/oidc';
import type { IssuerStore } from './issuer-store.ts';

export interface IssuerValidators {
  /** The caller of a bearer JWT, validated by the registered issuer it names; TokenRejectedError otherwise. */
  validate(token: string): Promise<ValidatedToken<RegistryRole>>;
  /** The same checks without the role (libs/oidc `verifyIdentity`): a CI token exchanged by trusted publishing. */
  verifyIdentity(token: string): Promise<VerifiedIdentity>;
}

export interface IssuerValidatorsOptions {
  clock: Clock;
  /** Passed to every validator (libs/oidc defaults: 30 s tolerance, 30 s refetch cooldown). */
  clockToleranceSecs?: number;
  refetchCooldownSecs?: number;
  /** Whether discovery and JWKS may be fetched from private addresses (DECISIONS D9); default refused. */
  allowPrivateTargets?: () => boolean;
}

/** Validators kept for deleted or changed issuers are dropped past this many (they are cheap to rebuild). */
const CACHE_MAX = 256;

/**
 * Hot reload of issuers (docs/registry-auth.md "Hot reload"). A token's `iss` (read before any
 * check, only to pick the issuer) is looked up in the store on every request, one indexed read,
 * and the validator is reused only while the record's store version is unchanged. So a
 * registration, change or deletion is effective on the next request in every registry process
 * sharing the store, with no polling and no message; a validator kept across requests keeps its
 * JWKS cache.
 */
export function createIssuerValidators(issuers: IssuerStore, options: IssuerValidatorsOptions): IssuerValidators {
  const cache = new Map<string, { version: number; validator: TokenValidator<RegistryRole> }>();
  async function validatorFor(token: string): Promise<TokenValidator<RegistryRole>> {
    const iss = claimedIssuer(token);
    if (iss === null) throw new TokenRejectedError('malformed', 'malformed token: expected a signed JWT with an iss claim');
    const found = await issuers.findByIssuer(iss);
    if (found === null) throw new TokenRejectedError('unknown_issuer', 'the token issuer is not registered with this registry (GET /admin/issuers)');
    let entry = cache.get(found.doc.id);
    if (entry?.version !== found.version) {
      if (cache.size >= CACHE_MAX) cache.clear();
      entry = {
        version: found.version,
        validator: createTokenValidator(found.doc, {
          roles: REGISTRY_ROLES,
          now: () => options.clock.now(),
          allowPrivateTargets: options.allowPrivateTargets ?? (() => false),
          ...(options.clockToleranceSecs === undefined ? {} : { clockToleranceSecs: options.clockToleranceSecs }),
          ...(options.refetchCooldownSecs === undefined ? {} : { refetchCooldownSecs: options.refetchCooldownSecs }),
        }),
      };
      cache.set(found.doc.id, entry);
    }
    return entry.validator;
  }
  return {
    validate: async (token) => (await validatorFor(token)).validate(token),
    verifyIdentity: async (token) => (await validatorFor(token)).verifyIdentity(token),
  };
}
