import type { Role } from '@agent-platform/contracts';
import type { Caller } from './identity.ts';

/** API key as listed (spec §Resources "API key"); never carries the secret or its hash. */
export interface ApiKeyView {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  created_at: string;
  expires_at?: string;
  revoked: boolean;
  expired: boolean;
}

/** Returned once, at creation or rotation. */
export interface IssuedApiKey {
  id: string;
  name: string;
  role: Role;
  secret: string;
  prefix: string;
  created_at: string;
  expires_at?: string;
  previous_key_id?: string;
}

export interface CreateKeyInput {
  name: string;
  role: Role;
  /** Duration like `90d`, `24h`, `30m`; omitted = no expiry. */
  expires_in?: string;
}

/**
 * API key lifecycle (spec §Authentication, §States "API key"). Secrets are `svc_sk_` + random,
 * shown once, stored only as a hash. Every method reads the shared store, so a revocation
 * through one api node is seen by every node on its next request.
 */
export interface KeyService {
  create(input: CreateKeyInput): Promise<IssuedApiKey>;
  list(): Promise<ApiKeyView[]>;
  /** NotFound for an unknown id; revoking twice is harmless. */
  revoke(id: string): Promise<void>;
  /** Revokes `id` and issues a new key with the same name and role. */
  rotate(id: string, options?: { expires_in?: string }): Promise<IssuedApiKey>;
  /** The caller for a presented secret, or null when unknown, revoked or expired. */
  authenticate(secret: string): Promise<Caller | null>;
  /** True while no key was ever created (the bootstrap rule). */
  isEmpty(): Promise<boolean>;
}
