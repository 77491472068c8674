import { parseTrustedKey, verifyVersion, type SignedVersion } from '../signing/registry-signing.ts';

/** The registry signing keys a platform trusts, ready to check version signatures. */
export interface RegistryTrust {
  readonly keyIds: readonly string[];
  /** The key id of the trusted key that signed `fields`, or null. */
  verify(fields: SignedVersion, signature: string): string | null;
}

/**
 * `[catalog] trusted_keys` as a verifier. Throws on a key that does not parse, naming it (libs/config
 * refuses such a file at boot, so a running platform never gets here with one).
 */
export function createRegistryTrust(keys: readonly string[]): RegistryTrust {
  const trusted = keys.map((key) => parseTrustedKey(key));
  return {
    keyIds: trusted.map((t) => t.key_id),
    verify: (fields, signature) => verifyVersion(fields, signature, trusted)?.key_id ?? null,
  };
}
