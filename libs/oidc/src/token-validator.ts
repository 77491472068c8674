import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyOptions, type ProtectedHeaderParameters } from 'jose';
import { algorithmProblems, isAsymmetricAlgorithm } from './algorithms.ts';
import { fetchJson, type FetchLimits } from './bounded-fetch.ts';
import { discoverJwksUri } from './discovery.ts';
import { createKeySetCache, type KeySet } from './key-set-cache.ts';
import { externalRoles, mapRole } from './role-claim.ts';
import { TokenRejectedError } from './token-rejected.ts';

/**
 * One trusted issuer, in the spec's words (§Registry surface issuer body, §Authentication
 * `[auth.oidc]`): the same fields whichever surface registers it.
 */
export interface TokenValidatorSettings<R extends string> {
  issuer: string;
  audience: string;
  /** Empty: discovered from `<issuer>/.well-known/openid-configuration`. */
  jwks_uri: string;
  role_claim: string;
  allowed_algorithms: readonly string[];
  /** External role name to platform role. */
  role_mapping: Readonly<Record<string, R>>;
  jwks_cache_ttl_secs: number;
}

/** What the using surface decides; every field but `roles` has a default. */
export interface TokenValidatorOptions<R extends string> {
  /** The surface's roles, most privileged first: of several mapped roles, the first here wins. */
  roles: readonly R[];
  /** Seconds of clock skew allowed on `exp` and `nbf` (default 30). */
  clockToleranceSecs?: number;
  /** Least seconds between two JWKS fetches caused by tokens (unknown `kid`, failing endpoint); default 30. */
  refetchCooldownSecs?: number;
  /** Discovery and JWKS requests: deadline (default 5000 ms) and size cap (default 512 KiB). */
  fetchTimeoutMs?: number;
  maxResponseBytes?: number;
  /**
   * Whether discovery and JWKS requests may reach loopback, private or link-local addresses
   * (DECISIONS D9). Default true: issuers the operator wrote in the config file are trusted; a
   * surface whose issuers arrive through an API passes `[network] allow_private_targets`.
   */
  allowPrivateTargets?: () => boolean;
  /** Refuse every token whose header `typ` is not `at+jwt` (RFC 9068); default false, see `idTokenMarker`. */
  requireAccessTokenType?: boolean;
  now?: () => Date;
}

/** An accepted token. */
export interface ValidatedToken<R extends string> {
  /** The `sub` claim. */
  identity: string;
  role: R;
  issuer: string;
  claims: JWTPayload;
}

/** A token whose signature, issuer, audience, lifetime and kind were checked, without any role. */
export interface VerifiedIdentity {
  /** The `sub` claim. */
  identity: string;
  issuer: string;
  claims: JWTPayload;
}

export interface TokenValidator<R extends string> {
  readonly settings: TokenValidatorSettings<R>;
  /** The caller of a bearer token, or a TokenRejectedError saying why not. */
  validate(token: string): Promise<ValidatedToken<R>>;
  /**
   * Every check of `validate` but the role (never `no_role`): for a token that proves who is
   * calling and is then matched on its claims, not mapped to a role (the registry's trusted
   * publishing, where CI tokens carry no role).
   */
  verifyIdentity(token: string): Promise<VerifiedIdentity>;
}

const MAX_TOKEN_LENGTH = 16_384;
/** Claims only an ID token carries (OIDC Core §2, §3.1.3.6, §3.3.2.11), and Keycloak's `typ: ID`. */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash', 's_hash'] as const;

/**
 * A validator for the tokens of one issuer (docs/registry-auth.md "Tokens"). It checks, in
 * order: the token's shape and size; its `alg` (must be one of `allowed_algorithms`, never
 * `none` nor HMAC); the signature, with a key of the issuer's JWKS only (the header's `jku`,
 * `x5u`, `jwk` and `x5c` are never read), whose type must match `alg`; `iss` exactly, `aud`,
 * `exp` (required) and `nbf` with the clock tolerance; `sub` (required); that it is an access
 * token, not an ID token; and finally its role. The JWKS is fetched lazily and cached.
 */
export function createTokenValidator<R extends string>(settings: TokenValidatorSettings<R>, options: TokenValidatorOptions<R>): TokenValidator<R> {
  const problems = algorithmProblems(settings.allowed_algorithms);
  if (problems.length > 0) throw new Error(`issuer ${settings.issuer}: ${problems.join('; ')}`);
  const now = options.now ?? (() => new Date());
  const limits: FetchLimits = { timeoutMs: options.fetchTimeoutMs ?? 5_000, maxBytes: options.maxResponseBytes ?? 512 * 1024, allowPrivateTargets: options.allowPrivateTargets ?? (() => true) };
  const keys = createKeySetCache({
    issuer: settings.issuer,
    ttlMs: settings.jwks_cache_ttl_secs * 1000,
    cooldownMs: (options.refetchCooldownSecs ?? 30) * 1000,
    now: () => now().getTime(),
    load: async () => fetchJson(settings.jwks_uri === '' ? await discoverJwksUri(settings.issuer, limits) : settings.jwks_uri, limits),
  });
  const allowed = new Set(settings.allowed_algorithms);

  async function verifyWith(token: string, set: KeySet, header: ProtectedHeaderParameters): Promise<JWTPayload> {
    const verifyOptions: JWTVerifyOptions = {
      issuer: settings.issuer,
      audience: settings.audience,
      algorithms: [...allowed],
      clockTolerance: options.clockToleranceSecs ?? 30,
      currentDate: now(),
      requiredClaims: ['exp', 'sub'],
    };
    try {
      return (await jwtVerify(token, set, verifyOptions)).payload;
    } catch (error) {
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
      // No `kid` and several keys fit the algorithm: the one that verifies is the signer's.
      for await (const key of error) {
        try {
          return (await jwtVerify(token, key, verifyOptions)).payload;
        } catch (attempt) {
          if (!(attempt instanceof errors.JWSSignatureVerificationFailed)) throw attempt;
        }
      }
      throw new errors.JWSSignatureVerificationFailed(`no key of issuer ${settings.issuer} verifies a token without kid (alg ${header.alg})`);
    }
  }

  async function verify(token: string, header: ProtectedHeaderParameters): Promise<JWTPayload> {
    try {
      return await verifyWith(token, await keys.current(), header);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // A key the cached set lacks: the issuer may have rotated. Fetched again at most once per cooldown.
      const fresh = await keys.refresh();
      if (fresh === null) throw error;
      return verifyWith(token, fresh, header);
    }
  }

  async function verifyIdentity(token: string): Promise<VerifiedIdentity> {
    const header = readHeader(token, allowed);
    let payload: JWTPayload;
    try {
      payload = await verify(token, header);
    } catch (error) {
      throw rejection(error, settings);
    }
    const marker = idTokenMarker(header, payload, options.requireAccessTokenType ?? false);
    if (marker !== null) throw new TokenRejectedError('not_an_access_token', `not an access token (${marker}): send an access token issued for audience ${settings.audience}`);
    return { identity: String(payload.sub), issuer: settings.issuer, claims: payload };
  }

  return {
    settings,
    verifyIdentity,
    async validate(token) {
      const { claims: payload } = await verifyIdentity(token);
      const role = mapRole(externalRoles(payload, settings.role_claim), settings.role_mapping, options.roles);
      if (role === null) {
        const held = externalRoles(payload, settings.role_claim);
        const values = held.length === 0 ? 'absent or empty' : `holds ${held.slice(0, 20).map((v) => `'${v.slice(0, 60)}'`).join(', ')}`;
        throw new TokenRejectedError(
          'no_role',
          `the token of '${String(payload.sub).slice(0, 100)}' carries no role this service maps (claim '${settings.role_claim}' ${values}; issuer ${settings.issuer}): map one of its values in role_mapping`,
          { subject: String(payload.sub) },
        );
      }
      return { identity: String(payload.sub), role, issuer: settings.issuer, claims: payload };
    },
  };
}

/** The protected header, refused before any key is looked at when its `alg` is not allowed. */
function readHeader(token: string, allowed: ReadonlySet<string>): ProtectedHeaderParameters {
  if (token.length > MAX_TOKEN_LENGTH || token.split('.').length !== 3) throw new TokenRejectedError('malformed', 'malformed token: expected a signed JWT (three dot-separated parts)');
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new TokenRejectedError('malformed', 'malformed token: unreadable header');
  }
  const alg = typeof header.alg === 'string' ? header.alg : '';
  if (alg.toLowerCase() === 'none') throw new TokenRejectedError('algorithm_not_allowed', "unsigned token (alg 'none') refused");
  if (!isAsymmetricAlgorithm(alg) || !allowed.has(alg)) {
    throw new TokenRejectedError('algorithm_not_allowed', `token algorithm '${alg.slice(0, 20)}' is not allowed (allowed: ${[...allowed].join(', ')})`);
  }
  return header;
}

/**
 * Why a token that verified is not an access token for us, or null. Rule (docs/registry-auth.md
 * "Access tokens, not ID tokens"): a header `typ` other than `at+jwt` (RFC 9068 §2.1) or `JWT`
 * is refused (`id+jwt`, `logout+jwt`, ...); with `typ` `JWT` or absent, which many providers still
 * send on access tokens, a token carrying an ID-token-only claim (`nonce`, `at_hash`, `c_hash`,
 * `s_hash`, or `typ: "ID"` as Keycloak writes it) is refused. The `aud` check does the rest: an
 * ID token's audience is the client id, never the API's audience.
 */
export function idTokenMarker(header: ProtectedHeaderParameters, payload: JWTPayload, requireAccessTokenType: boolean): string | null {
  const typ = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : null;
  if (typ === 'at+jwt') return null;
  if (requireAccessTokenType) return `header typ '${String(header.typ ?? 'absent').slice(0, 30)}', expected at+jwt`;
  if (typ !== null && typ !== 'jwt') return `header typ '${String(header.typ).slice(0, 30)}'`;
  const claim = ID_TOKEN_CLAIMS.find((name) => payload[name] !== undefined);
  if (claim !== undefined) return `it carries the ID token claim '${claim}'`;
  if (payload.typ === 'ID') return "its typ claim is 'ID'";
  return null;
}

/** jose's errors in our reasons; a TokenRejectedError passes through. */
function rejection(error: unknown, settings: TokenValidatorSettings<string>): TokenRejectedError {
  if (error instanceof TokenRejectedError) return error;
  if (error instanceof errors.JWTExpired) return new TokenRejectedError('expired', 'token expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'iss':
        return new TokenRejectedError('wrong_issuer', `token issuer is not ${settings.issuer}`);
      case 'aud':
        return new TokenRejectedError('wrong_audience', `token audience does not include ${settings.audience}`);
      case 'nbf':
        return new TokenRejectedError('not_yet_valid', 'token not valid yet (nbf in the future)');
      default:
        return new TokenRejectedError('missing_claim', `token claim '${error.claim}' is missing or invalid (${error.reason})`);
    }
  }
  if (error instanceof errors.JWKSNoMatchingKey) return new TokenRejectedError('unknown_key', `no key of issuer ${settings.issuer} matches the token's kid and alg`);
  if (error instanceof errors.JWSSignatureVerificationFailed) return new TokenRejectedError('bad_signature', 'token signature does not verify');
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return new TokenRejectedError('algorithm_not_allowed', 'token algorithm is not allowed');
  return new TokenRejectedError('malformed', 'malformed token', { cause: error });
}

/** The `iss` a token claims, unverified: which issuer's validator to ask. Null when unreadable. */
export function claimedIssuer(token: string): string | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : null;
  } catch {
    return null;
  }
}
