import type { RegistryIssuedToken, RegistryToken, RegistryTokenCreateBody, RegistryTokenScope } from '@agent-platform/contracts';
import { createKeyStore, Errors, type ApiKeyView, type Clock, type KeyKind } from '@agent-platform/domain';
import { isPackageName } from '@agent-platform/packages';
import type { Store } from '@agent-platform/store';
import { REGISTRY_COLLECTIONS } from '../registry-records.ts';
import type { TrustedGrant } from '../trusted-publishing/trusted-grant.ts';
import { KEY_IDENTITY_PREFIX } from './registry-identity.ts';

/** Every publisher token starts with this (a registry key `reg_sk_`, an api key `svc_sk_`). */
export const REGISTRY_TOKEN_PREFIX = 'reg_pt_';

/** A token is a registry key of its own kind: hashed, shown once, expiring, revocable (libs/domain key store). */
const TOKEN_KIND: KeyKind<'publisher'> = {
  collection: REGISTRY_COLLECTIONS.tokens,
  secretPrefix: REGISTRY_TOKEN_PREFIX,
  roles: ['publisher'],
  noun: 'registry token',
};

/** What a token may do, beside its key record (same id): who it acts as, its scopes, its packages. */
interface TokenGrantRecord {
  id: string;
  identity: string;
  scopes: RegistryTokenScope[];
  packages: string[] | null;
  /** Set on a token minted by a trusted-publishing exchange (trusted-publishing/). */
  trusted?: TrustedGrant;
}

/** A presented token's caller: the identity it acts as, limited to its scopes and packages. */
export interface TokenGrant {
  token_id: string;
  identity: string;
  scopes: readonly RegistryTokenScope[];
  /** Names and `prefix*` patterns; null = every package the identity may change. */
  packages: readonly string[] | null;
  /** A trusted-publishing token: may publish its packages without owning them, and records this as provenance. */
  trusted?: TrustedGrant;
}

/**
 * Publishers' own tokens (docs/registry-auth.md "Tokens"), as crates.io's: each acts as the
 * identity that made it, only for its scopes and package patterns, until it expires or is revoked.
 * A token made by a registry key stops working when no live key of that name is left (a revoked
 * or expired key takes its tokens with it).
 */
export interface RegistryTokenService {
  /** `trusted`: a token minted by a trusted-publishing exchange (never through `POST /tokens`). */
  create(identity: string, body: RegistryTokenCreateBody, trusted?: TrustedGrant): Promise<RegistryIssuedToken>;
  /** The tokens acting as `identity`, newest first, revoked ones included (never a secret). */
  list(identity: string): Promise<RegistryToken[]>;
  /** Revokes a token of `by.identity` (any token when `by.admin`); NotFound otherwise, as for an unknown id. */
  revoke(id: string, by: { identity: string; admin: boolean }): Promise<RegistryToken>;
  authenticate(secret: string): Promise<TokenGrant | null>;
}

export function createRegistryTokenService(deps: {
  store: Store;
  clock: Clock;
  /** True while a live (unrevoked, unexpired) registry key has this name. */
  liveKeyNamed: (name: string) => Promise<boolean>;
}): RegistryTokenService {
  const keys = createKeyStore(deps, TOKEN_KIND);
  const grants = deps.store.collection<TokenGrantRecord>(REGISTRY_COLLECTIONS.tokenGrants, { indexes: [{ field: 'identity' }] });

  const viewOf = (key: Pick<ApiKeyView<'publisher'>, 'id' | 'name' | 'prefix' | 'created_at' | 'expires_at' | 'revoked'>, grant: TokenGrantRecord): RegistryToken => ({
    id: key.id,
    name: key.name,
    identity: grant.identity,
    scopes: grant.scopes,
    packages: grant.packages,
    prefix: key.prefix,
    created_at: key.created_at,
    expires_at: key.expires_at ?? null,
    revoked: key.revoked,
  });

  const ownedView = async (id: string, by: { identity: string; admin: boolean }): Promise<RegistryToken> => {
    const grant = (await grants.get(id))?.doc;
    const key = grant === undefined ? undefined : (await keys.list()).find((k) => k.id === id);
    // Someone else's token is as unknown to the caller as a token that does not exist.
    if (grant === undefined || key === undefined || (!by.admin && grant.identity !== by.identity)) throw Errors.notFound('registry token', id);
    return viewOf(key, grant);
  };

  return {
    async create(identity, body, trusted) {
      const packages = body.packages === undefined ? null : [...new Set(body.packages.map(validPattern))];
      const issued = await keys.create({ name: body.name, role: 'publisher', ...(body.expires_in === undefined ? {} : { expires_in: body.expires_in }) });
      // The grant is written after the key: a crash between them leaves a key without a grant,
      // which authenticates nobody (and whose secret was never shown).
      const grant: TokenGrantRecord = { id: issued.id, identity, scopes: [...new Set(body.scopes)], packages, ...(trusted === undefined ? {} : { trusted }) };
      await grants.insert(grant);
      return { ...viewOf({ ...issued, revoked: false }, grant), secret: issued.secret };
    },

    async list(identity) {
      const mine = new Map((await grants.find({ where: { identity } })).map(({ doc }) => [doc.id, doc]));
      return (await keys.list()).flatMap((key) => {
        const grant = mine.get(key.id);
        return grant === undefined ? [] : [viewOf(key, grant)];
      });
    },

    async revoke(id, by) {
      const token = await ownedView(id, by);
      await keys.revoke(id);
      return { ...token, revoked: true };
    },

    async authenticate(secret) {
      const caller = await keys.authenticate(secret);
      if (caller === null || caller.key_id === null) return null;
      const grant = (await grants.get(caller.key_id))?.doc;
      if (grant === undefined) return null;
      const keyName = keyNameOf(grant.identity);
      if (keyName !== null && !(await deps.liveKeyNamed(keyName))) return null;
      return { token_id: grant.id, identity: grant.identity, scopes: grant.scopes, packages: grant.packages, ...(grant.trusted === undefined ? {} : { trusted: grant.trusted }) };
    },
  };
}

/** True when `pattern` (a name, or a prefix ending in `*`) covers package `name`. */
export function patternCovers(pattern: string, name: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
}

/** A package pattern: a valid package name, or a prefix of one followed by a single `*` at the end. */
function validPattern(pattern: string): string {
  const prefix = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
  const valid = pattern.endsWith('*') ? prefix.length > 0 && /^[a-z0-9][a-z0-9-]*$/.test(prefix) : isPackageName(prefix);
  if (!valid || prefix.includes('*')) {
    throw Errors.validation(`invalid package pattern '${pattern.slice(0, 80)}': a package name, or a name prefix followed by one '*' at the end (claims-*)`, {
      field: 'packages',
    });
  }
  return pattern;
}

/** The registry key name behind a `key:<name>` identity; null for any other identity. */
function keyNameOf(identity: string): string | null {
  return identity.startsWith(KEY_IDENTITY_PREFIX) ? identity.slice(KEY_IDENTITY_PREFIX.length) : null;
}
