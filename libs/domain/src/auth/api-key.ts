import type { Role } from '@agent-platform/contracts';
import type { Caller } from './identity.ts';

/** API key as listed (spec §Resources "API key"); never carries the secret or its hash. */
export interface ApiKeyView<R extends string = Role> {
  id: string;
  name: string;
  role: R;
  prefix: string;
  created_at: string;
  expires_at?: string;
  revoked: boolean;
  expired: boolean;
}

/** Returned once, at creation or rotation. */
export interface IssuedApiKey<R extends string = Role> {
  id: string;
  name: string;
  role: R;
  secret: string;
  prefix: string;
  created_at: string;
  expires_at?: string;
  previous_key_id?: string;
}

export interface CreateKeyInput<R extends string = Role> {
  name: string;
  role: R;
  /** Duration like `90d`, `24h`, `30m`; omitted = no expiry. */
  expires_in?: string;
}

/**
 * API key lifecycle (spec §Authentication, §States "API key"). Secrets are `svc_sk_` + random,
 * shown once, stored only as a hash. Every method reads the shared store, so a revocation
 * through one api node is seen by every node on its next request. Generic over the role set: the
 * registry's keys (`reg_sk_`, REGISTRY_ROLES) are the same service over another collection
 * (`createKeyStore` and its `KeyKind`).
 */
export interface KeyService<R extends string = Role> {
  create(input: CreateKeyInput<R>): Promise<IssuedApiKey<R>>;
  list(): Promise<ApiKeyView<R>[]>;
  /** NotFound for an unknown id; revoking twice is harmless. */
  revoke(id: string): Promise<void>;
  /** Revokes `id` and issues a new key with the same name and role. */
  rotate(id: string, options?: { expires_in?: string }): Promise<IssuedApiKey<R>>;
  /** The caller for a presented secret, or null when unknown, revoked or expired. */
  authenticate(secret: string): Promise<Caller<R> | null>;
  /** True while no key was ever created (the bootstrap rule). */
  isEmpty(): Promise<boolean>;
}
