import type { TrustedPublishingToken } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { IssuerValidators } from '../auth/issuer-validators.ts';
import { tokenIdentity } from '../auth/registry-identity.ts';
import type { RegistryTokenService } from '../auth/registry-tokens.ts';
import { RegistryErrors } from '../packages/registry-error.ts';
import { keptClaims, type TrustedGrant } from './trusted-grant.ts';
import { packagesTrusting } from './trusted-publishers.ts';

/** How long a token minted by an exchange lives: one CI job's publish, as PyPI's 15 minutes. */
export const TRUSTED_PUBLISHING_TOKEN_LIFETIME = '15m';

/** An exchange's answer, plus what the route audits (never the secret). */
export interface TrustedPublishingExchangeResult extends TrustedPublishingToken {
  token_id: string;
  issuer: string;
  claims: Record<string, string>;
}

export interface TrustedPublishingExchange {
  /**
   * A CI job's OIDC token for a short-lived publisher token (docs/registry-auth.md "Trusted
   * publishing"). The token is validated against its registered issuer (signature, audience,
   * expiry, algorithms; no role); a refused one throws the validator's TokenRejectedError. No
   * package trusting it: 403 PermissionDenied.
   */
  exchange(jwt: string): Promise<TrustedPublishingExchangeResult>;
}

export function createTrustedPublishingExchange(deps: {
  store: Store;
  tokens: Pick<RegistryTokenService, 'create'>;
  validators: Pick<IssuerValidators, 'verifyIdentity'>;
}): TrustedPublishingExchange {
  return {
    async exchange(jwt) {
      const verified = await deps.validators.verifyIdentity(jwt);
      const found = await packagesTrusting(deps.store, verified.issuer, verified.claims);
      // Says nothing about which packages trust other identities: only that none trusts this one.
      if (found.length === 0)
        throw RegistryErrors.forbidden(
          `no package trusts this CI identity: no trusted publisher of issuer ${verified.issuer} names claims that all equal this token's (an owner adds one with PUT /packages/{name}/trusted-publishers)`,
          { issuer: verified.issuer },
        );
      const identity = tokenIdentity(verified.issuer, verified.identity);
      const packages = found.map((f) => f.name);
      const trusted: TrustedGrant = { issuer: verified.issuer, claims: keptClaims(found.flatMap((f) => f.matching), verified.claims) };
      const issued = await deps.tokens.create(
        identity,
        { name: 'trusted publishing', scopes: ['publish-update'], packages, expires_in: TRUSTED_PUBLISHING_TOKEN_LIFETIME },
        trusted,
      );
      if (issued.expires_at === null) throw new Error('a trusted publishing token was minted without an expiry');
      return { token: issued.secret, expires_at: issued.expires_at, packages, identity, token_id: issued.id, issuer: verified.issuer, claims: trusted.claims };
    },
  };
}
