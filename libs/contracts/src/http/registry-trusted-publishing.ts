import { Type, type Static } from 'typebox';

/**
 * Trusted publishing (docs/registry-auth.md "Trusted publishing"), as PyPI's and npm's: a package
 * names the CI identities allowed to publish it (an issuer registered at `/admin/issuers` and exact
 * claims); a CI job exchanges its OIDC token for a short-lived publisher token for those packages,
 * and every version it publishes records where it came from (`provenance`).
 */

/** Claims that say nothing about who the CI job is (they are checked by the token validator, never matched). */
export const TRUSTED_PUBLISHER_RESERVED_CLAIMS = ['iss', 'aud', 'exp', 'nbf', 'iat', 'jti', 'nonce'] as const;

/** One CI identity a package trusts: tokens of `issuer` whose claims equal every entry of `claims`. */
export const TrustedPublisher = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: 2048, description: 'An issuer registered at /admin/issuers, exactly as registered.' }),
    claims: Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.String({ minLength: 1, maxLength: 500 }), {
      minProperties: 1,
      maxProperties: 10,
      description: 'Claim name to the exact string the token must carry (`repository`, `workflow`, `ref`, `sub`...); not iss, aud, exp, nbf, iat, jti, nonce.',
    }),
  },
  { additionalProperties: false },
);
export type TrustedPublisher = Static<typeof TrustedPublisher>;

/** `PUT /packages/{name}/trusted-publishers` and its `GET`: the whole list (empty: no trusted publishing). */
export const RegistryTrustedPublishers = Type.Object(
  { publishers: Type.Array(TrustedPublisher, { maxItems: 20, description: 'Any of them may publish; empty turns trusted publishing off.' }) },
  { additionalProperties: false },
);
export type RegistryTrustedPublishers = Static<typeof RegistryTrustedPublishers>;

/** `POST /trusted-publishing/exchange`: the CI job's OIDC token is the credential. */
export const TrustedPublishingExchangeBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 16_384, description: "The CI job's OIDC token (a JWT of a registered issuer, audience the registry's)." }) },
  { additionalProperties: false },
);
export type TrustedPublishingExchangeBody = Static<typeof TrustedPublishingExchangeBody>;

/** The answer of an exchange: a publisher token (`reg_pt_`) that publishes new versions of `packages` only. */
export const TrustedPublishingToken = Type.Object({
  token: Type.String({ description: 'Shown once (`reg_pt_...`): send it as `Authorization: Bearer` to `POST /packages`.' }),
  expires_at: Type.String({ description: 'ISO 8601 UTC; 15 minutes after the exchange.' }),
  packages: Type.Array(Type.String(), { description: 'The packages it may publish versions of: those trusting this identity.' }),
  identity: Type.String({ description: '`<issuer>#<sub>`: recorded as `published_by`.' }),
});
export type TrustedPublishingToken = Static<typeof TrustedPublishingToken>;

/** Where a version came from: the CI identity that published it through trusted publishing. */
export const RegistryProvenance = Type.Object({
  kind: Type.Literal('trusted-publishing'),
  identity: Type.String({ description: '`<issuer>#<sub>` of the CI token exchanged.' }),
  issuer: Type.String(),
  claims: Type.Record(Type.String(), Type.String(), {
    description: 'The claims the package required, plus the run-identifying claims the token carried (sha, ref, workflow_ref...; docs/registry-auth.md).',
  }),
});
export type RegistryProvenance = Static<typeof RegistryProvenance>;
