import { join } from 'node:path';
import type { BackupSigner, TrustedBackupKey } from '@agent-platform/backup';
import { parseTrustedKey } from '@agent-platform/registry-core';
import { loadCheckpointSigner } from '../audit/load-checkpoint-signer.ts';

/** `<data_dir>/backup-signing-key.pem` unless `[backup] signing_key_file` names one. */
export function backupKeyPath(dataDir: string, configured: string): string {
  return configured === '' ? join(dataDir, 'backup-signing-key.pem') : configured;
}

/**
 * The platform's backup signing key (docs/backup.md "Foreign archives"): an Ed25519 PEM made at
 * first start (0600) by the same loader as the checkpoint key, but its own key: a backup signature
 * says "this platform made this archive", and is what another platform's `[backup] trusted_keys`
 * accepts.
 */
export async function loadBackupSigner(path: string): Promise<BackupSigner> {
  const signer = await loadCheckpointSigner(path);
  return { keyId: signer.keyId, sign: (bytes) => signer.sign(bytes) };
}

/** `[backup] trusted_keys` parsed (the boot already refused a key that does not parse). */
export function trustedBackupKeys(keys: readonly string[]): TrustedBackupKey[] {
  return keys.map((key) => parseTrustedKey(key));
}
