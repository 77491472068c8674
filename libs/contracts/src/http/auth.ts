import { Type, type Static } from 'typebox';
import { Role } from '../roles.ts';

/**
 * HTTP bodies of spec §Endpoints "Authentication and keys". Wire names are the spec's. The
 * duration grammar is checked by the key service (its 400 names the accepted forms), as is a
 * blank name. Request bodies refuse unknown fields: a misspelt `expires_in` silently ignored
 * would issue a key that never expires.
 */

const Uuid = Type.String({ format: 'uuid', description: 'API key id (UUID).' });
const Timestamp = Type.String({ description: 'ISO 8601 UTC.' });
const ExpiresIn = Type.String({
  description: 'Duration until expiry: a positive whole number and one unit s, m, h, d or w (`90d`, `24h`, `30m`).',
});

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, description: '1-64 characters; need not be unique.' }),
    role: Role,
    expires_in: Type.Optional(ExpiresIn),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

/** Optional body of POST /auth/keys/{id}/rotate; without `expires_in` the old key's policy is kept. */
export const RotateKeyBody = Type.Object({ expires_in: Type.Optional(ExpiresIn) }, { additionalProperties: false });
export type RotateKeyBody = Static<typeof RotateKeyBody>;

export const KeyIdParams = Type.Object({ id: Type.String({ description: 'API key id (UUID).' }) });
export type KeyIdParams = Static<typeof KeyIdParams>;

/** A key as returned once, by creation or rotation: the only place `secret` ever appears. */
export const IssuedApiKey = Type.Object({
  id: Uuid,
  name: Type.String(),
  role: Role,
  secret: Type.String({ description: 'The bearer token (`svc_sk_...`); shown only in this response.' }),
  prefix: Type.String({ description: 'Leading characters of the secret, kept for identification.' }),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
  previous_key_id: Type.Optional(Type.String({ description: 'The key this one replaced (rotation only).' })),
});
export type IssuedApiKey = Static<typeof IssuedApiKey>;

/** A key as listed; never carries a secret. */
export const ApiKeyView = Type.Object({
  id: Uuid,
  name: Type.String(),
  role: Role,
  prefix: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
  revoked: Type.Boolean(),
  expired: Type.Boolean({ description: 'Computed from expires_at against now.' }),
});
export type ApiKeyView = Static<typeof ApiKeyView>;

export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKeyView) });
export type ApiKeyList = Static<typeof ApiKeyList>;

export const KeyRevoked = Type.Object({ status: Type.Literal('revoked'), id: Type.String() });
export type KeyRevoked = Static<typeof KeyRevoked>;

export const LoggedOut = Type.Object({ status: Type.Literal('logged_out') });
export type LoggedOut = Static<typeof LoggedOut>;

export const WhoAmI = Type.Object({
  identity: Type.String(),
  role: Role,
  key_id: Type.Union([Type.String(), Type.Null()], { description: 'Null when auth is disabled, and for an OIDC access token.' }),
  issuer: Type.Optional(Type.String({ description: 'Auth mode oidc, a caller with an access token: the identity provider that issued it.' })),
  subject: Type.Optional(Type.String({ description: 'Auth mode oidc, a caller with an access token: its `sub` claim (identity is `oidc:<sub>`).' })),
});
export type WhoAmI = Static<typeof WhoAmI>;

export const AuthCheck = Type.Object({
  authenticated: Type.Boolean({ description: 'True for every request that reaches the route.' }),
  auth_required: Type.Boolean({ description: 'True when a real key was used; false for the anonymous caller.' }),
  identity: Type.String(),
  role: Role,
});
export type AuthCheck = Static<typeof AuthCheck>;
