/** Vault entry as listed (spec §Resources "Vault entry"); values are never returned. */
export interface VaultEntry {
  key: string;
  stored_at: string;
}

/**
 * Write-only credential vault. Values are AES-256-GCM encrypted at rest; no route, log line,
 * audit entry or metric ever carries one. `resolve` is for the platform's own credential
 * resolution (providers, integrations) and always reads the current stored value, so a rotated
 * secret is used on the next resolution without restart.
 */
export interface Vault {
  put(key: string, value: string): Promise<VaultEntry>;
  list(): Promise<VaultEntry[]>;
  /** False when the key was absent. */
  delete(key: string): Promise<boolean>;
  resolve(key: string): Promise<string | null>;
}
