import { REGISTRY_ROLES, type RegistryIssuedKey, type RegistryKey, type RegistryKeyCreateBody, type RegistryRole } from '@agent-platform/contracts';
import { bootstrapFirstKey, createKeyStore, Errors, type ApiKeyView, type Caller, type Clock, type IssuedApiKey, type KeyKind } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { REGISTRY_COLLECTIONS } from '../registry-records.ts';

/** Every registry key secret starts with this (an api key starts `svc_sk_`: neither is taken for the other). */
export const REGISTRY_KEY_PREFIX = 'reg_sk_';

/** The registry's keys: the api's key design (libs/domain key service) over their own collection, prefix and roles. */
export const REGISTRY_KEY_KIND: KeyKind<RegistryRole> = {
  collection: REGISTRY_COLLECTIONS.keys,
  secretPrefix: REGISTRY_KEY_PREFIX,
  roles: REGISTRY_ROLES,
  noun: 'registry key',
};

/** The bootstrap claim of the registry's key store, apart from the api's in a shared store. */
const BOOTSTRAP_CLAIM_ID = 'registry-first-key';

/**
 * Registry keys (docs/registry-auth.md "Keys"): `reg_sk_` secrets shown once, a SHA-256 hash
 * stored, optional expiry, rotation (new secret, old key revoked), revocation (DELETE). Views
 * are the registry's wire shapes.
 */
export interface RegistryKeyService {
  create(body: RegistryKeyCreateBody): Promise<RegistryIssuedKey>;
  /**
   * The first key, created without a credential while no key exists (the api's bootstrap rule):
   * it must be `registry-admin`, or nobody could ever manage the registry. Null when a key
   * already exists (the caller answers 401).
   */
  bootstrap(body: RegistryKeyCreateBody): Promise<RegistryIssuedKey | null>;
  list(): Promise<RegistryKey[]>;
  /** Revokes (idempotent) and returns the key as it now is; NotFound for an unknown id. */
  revoke(id: string): Promise<RegistryKey>;
  rotate(id: string, options?: { expires_in?: string }): Promise<RegistryIssuedKey>;
  /** The caller of a presented secret; null when unknown, revoked or expired. */
  authenticate(secret: string): Promise<Caller<RegistryRole> | null>;
  /** True while a key of this name can be used (not revoked, not expired): an owner it names, a token it made. */
  hasLiveKey(name: string): Promise<boolean>;
  isEmpty(): Promise<boolean>;
}

export function createRegistryKeyService(deps: { store: Store; clock: Clock }): RegistryKeyService {
  const keys = createKeyStore(deps, REGISTRY_KEY_KIND);
  const create = async (body: RegistryKeyCreateBody) => issuedView(await keys.create(body));
  return {
    create,
    async bootstrap(body) {
      if (body.role !== 'registry-admin') {
        throw Errors.validation(`the first registry key must have role registry-admin (not ${String(body.role).slice(0, 40)})`, { field: 'role' });
      }
      return bootstrapFirstKey({ ...deps, keys }, () => create(body), BOOTSTRAP_CLAIM_ID);
    },
    async list() {
      return (await keys.list()).map(keyView);
    },
    async revoke(id) {
      await keys.revoke(id);
      const found = (await keys.list()).find((key) => key.id === id);
      if (found === undefined) throw Errors.notFound('registry key', id);
      return keyView(found);
    },
    async rotate(id, options) {
      return issuedView(await keys.rotate(id, options));
    },
    authenticate: (secret) => keys.authenticate(secret),
    async hasLiveKey(name) {
      const now = deps.clock.now().getTime();
      return (await keys.list()).some((k) => k.name === name && !k.revoked && (k.expires_at === undefined || Date.parse(k.expires_at) > now));
    },
    isEmpty: () => keys.isEmpty(),
  };
}

function keyView(key: ApiKeyView<RegistryRole>): RegistryKey {
  return { id: key.id, name: key.name, role: key.role, prefix: key.prefix, created_at: key.created_at, expires_at: key.expires_at ?? null, revoked: key.revoked };
}

function issuedView(key: IssuedApiKey<RegistryRole>): RegistryIssuedKey {
  return {
    id: key.id,
    name: key.name,
    role: key.role,
    prefix: key.prefix,
    created_at: key.created_at,
    expires_at: key.expires_at ?? null,
    revoked: false,
    secret: key.secret,
  };
}
