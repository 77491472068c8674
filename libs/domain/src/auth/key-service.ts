import { randomUUID } from 'node:crypto';
import { ROLES, type Role } from '@agent-platform/contracts';
import { StoreConflictError, type Collection, type Store, type Versioned } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import type { ApiKeyView, CreateKeyInput, IssuedApiKey, KeyService } from './api-key.ts';
import { parseDuration } from './duration.ts';
import type { Caller } from './identity.ts';
import { generateSecret, hashSecret, KEY_SECRET_PREFIX, sameHash, secretPrefix } from './key-secret.ts';

/** How an API key is stored in the `api_keys` collection (a registry key in `registry_keys`). The secret itself is never stored. */
export interface ApiKeyRecord<R extends string = Role> {
  id: string;
  name: string;
  role: R;
  prefix: string;
  /** `sha256:<hex>` of the secret; see `hashSecret` for why a fast hash is right here. */
  secret_hash: string;
  created_at: string;
  expires_at: string | null;
  /** The expiry policy the key was issued with (`90d`...); a rotation without a body reuses it. */
  expires_in: string | null;
  revoked: boolean;
  revoked_at: string | null;
  /** The key this one replaced, when it was issued by a rotation. */
  previous_key_id: string | null;
}

export const API_KEYS_COLLECTION = 'api_keys';

/**
 * What sets one kind of key apart: where its records live, how its secrets start, the roles it
 * may carry and what messages call it. The api's keys are `API_KEY_KIND`; the registry's keys
 * (libs/registry-core) are another kind over the same service, so both share one design: secret
 * shown once, a hash stored, expiry, rotation, revocation.
 */
export interface KeyKind<R extends string> {
  collection: string;
  secretPrefix: string;
  roles: readonly R[];
  /** `API key`, `registry key`: used in error messages. */
  noun: string;
}

export const API_KEY_KIND: KeyKind<Role> = { collection: API_KEYS_COLLECTION, secretPrefix: KEY_SECRET_PREFIX, roles: ROLES, noun: 'API key' };

const NAME_MAX = 64;
/** Far longer than any secret we issue; anything longer is refused before hashing. */
const SECRET_MAX = 256;
/** Writers racing on the same key (rotate, revoke) retry this often before giving up. */
const MAX_WRITE_ATTEMPTS = 20;

export interface KeyServiceDeps {
  store: Store;
  clock: Clock;
}

/** The local API key store (spec §Authentication mode `local`), over the store port. */
export function createKeyService(deps: KeyServiceDeps): KeyService {
  return createKeyStore(deps, API_KEY_KIND);
}

/** A key store of any kind (`KeyKind`): the api's keys, the registry's keys. */
export function createKeyStore<R extends string>(deps: KeyServiceDeps, kind: KeyKind<R>): KeyService<R> {
  const keys = deps.store.collection<ApiKeyRecord<R>>(kind.collection, {
    indexes: [{ field: 'secret_hash', unique: true }],
    readMostly: true,
  });
  const now = (): Date => deps.clock.now();

  async function issue(
    name: string,
    role: R,
    expiresIn: string | null,
    previousKeyId: string | null,
  ): Promise<{ record: ApiKeyRecord<R>; secret: string }> {
    const createdAt = now();
    const secret = generateSecret(kind.secretPrefix);
    const record: ApiKeyRecord<R> = {
      id: randomUUID(),
      name,
      role,
      prefix: secretPrefix(secret),
      secret_hash: hashSecret(secret),
      created_at: createdAt.toISOString(),
      expires_at: expiresIn === null ? null : expiryFrom(createdAt, expiresIn),
      expires_in: expiresIn,
      revoked: false,
      revoked_at: null,
      previous_key_id: previousKeyId,
    };
    await keys.insert(record);
    return { record, secret };
  }

  return {
    async create(input: CreateKeyInput<R>): Promise<IssuedApiKey<R>> {
      const name = validName(input.name);
      const role = validRole(input.role, kind.roles);
      const expiresIn = validExpiresIn(input.expires_in);
      const { record, secret } = await issue(name, role, expiresIn, null);
      return issued(record, secret);
    },

    async list(): Promise<ApiKeyView<R>[]> {
      const at = now();
      const rows = await keys.find();
      // Oldest first; the id breaks ties (same millisecond) so that the order is stable.
      const records = rows.map(({ doc }) => doc).sort((a, b) => compare(a.created_at, b.created_at) || compare(a.id, b.id));
      return records.map((record) => view(record, at));
    },

    async revoke(id: string): Promise<void> {
      await revokeWithRetry(keys, id, now, kind.noun);
    },

    async rotate(id: string, options?: { expires_in?: string }): Promise<IssuedApiKey<R>> {
      const override = options?.expires_in === undefined ? undefined : validExpiresIn(options.expires_in);
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        const current = await keys.get(id);
        if (current === null) throw Errors.notFound(kind.noun, id);
        if (current.doc.revoked) {
          throw Errors.invalidState(`${kind.noun} '${id}' is revoked and cannot be rotated`, { id, state: 'revoked' });
        }
        const policy = override === undefined ? current.doc.expires_in : override;
        // Issue first, then revoke the old key with a version check: a crash in between leaves
        // two working keys (harmless, the admin revokes one) rather than none (a lock-out).
        const next = await issue(current.doc.name, current.doc.role, policy, id);
        try {
          await keys.replace(revokedCopy(current.doc, now()), current.version);
          return issued(next.record, next.secret);
        } catch (error) {
          await keys.delete(next.record.id);
          if (!(error instanceof StoreConflictError)) throw error;
        }
      }
      throw Errors.conflict(`${kind.noun} '${id}' is being changed concurrently; try again`, { id });
    },

    async authenticate(secret: string): Promise<Caller<R> | null> {
      if (!secret.startsWith(kind.secretPrefix) || secret.length > SECRET_MAX) return null;
      const hash = hashSecret(secret);
      const [found] = await keys.find({ where: { secret_hash: hash }, limit: 1 });
      if (found === undefined || !sameHash(found.doc.secret_hash, hash)) return null;
      const record = found.doc;
      if (record.revoked || isExpired(record, now())) return null;
      return { identity: record.name, role: record.role, key_id: record.id, authenticated: true };
    },

    async isEmpty(): Promise<boolean> {
      return (await keys.count()) === 0;
    },
  };
}

async function revokeWithRetry<R extends string>(keys: Collection<ApiKeyRecord<R>>, id: string, now: () => Date, noun: string): Promise<void> {
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const current: Versioned<ApiKeyRecord<R>> | null = await keys.get(id);
    if (current === null) throw Errors.notFound(noun, id);
    if (current.doc.revoked) return;
    try {
      await keys.replace(revokedCopy(current.doc, now()), current.version);
      return;
    } catch (error) {
      if (!(error instanceof StoreConflictError)) throw error;
    }
  }
  throw Errors.conflict(`${noun} '${id}' is being changed concurrently; try again`, { id });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function revokedCopy<R extends string>(record: ApiKeyRecord<R>, at: Date): ApiKeyRecord<R> {
  return { ...record, revoked: true, revoked_at: at.toISOString() };
}

function isExpired(record: ApiKeyRecord<string>, at: Date): boolean {
  return record.expires_at !== null && Date.parse(record.expires_at) <= at.getTime();
}

function view<R extends string>(record: ApiKeyRecord<R>, at: Date): ApiKeyView<R> {
  const base: ApiKeyView<R> = {
    id: record.id,
    name: record.name,
    role: record.role,
    prefix: record.prefix,
    created_at: record.created_at,
    revoked: record.revoked,
    expired: isExpired(record, at),
  };
  return record.expires_at === null ? base : { ...base, expires_at: record.expires_at };
}

function issued<R extends string>(record: ApiKeyRecord<R>, secret: string): IssuedApiKey<R> {
  const base: IssuedApiKey<R> = {
    id: record.id,
    name: record.name,
    role: record.role,
    secret,
    prefix: record.prefix,
    created_at: record.created_at,
  };
  const withExpiry = record.expires_at === null ? base : { ...base, expires_at: record.expires_at };
  return record.previous_key_id === null ? withExpiry : { ...withExpiry, previous_key_id: record.previous_key_id };
}

function validName(name: unknown): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  const length = [...trimmed].length;
  if (length < 1 || length > NAME_MAX) {
    throw Errors.validation(`key name must be 1-${NAME_MAX} characters (not blank)`, { field: 'name' });
  }
  return trimmed;
}

function validRole<R extends string>(role: unknown, roles: readonly R[]): R {
  if (typeof role !== 'string' || !(roles as readonly string[]).includes(role)) {
    throw Errors.validation(`invalid role '${String(role).slice(0, 40)}': expected one of ${roles.join(', ')}`, {
      field: 'role',
    });
  }
  return role as R;
}

function validExpiresIn(expiresIn: string | undefined): string | null {
  if (expiresIn === undefined) return null;
  parseDuration(expiresIn);
  return expiresIn;
}

function expiryFrom(from: Date, expiresIn: string): string {
  const at = new Date(from.getTime() + parseDuration(expiresIn));
  if (Number.isNaN(at.getTime()) || at.getUTCFullYear() > 9999) {
    throw Errors.validation(`invalid duration '${expiresIn}': the expiry would be after the year 9999`, {
      field: 'expires_in',
      value: expiresIn,
    });
  }
  return at.toISOString();
}
