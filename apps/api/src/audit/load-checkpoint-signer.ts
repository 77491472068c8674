import { sign } from 'node:crypto';
import { join } from 'node:path';
import type { CheckpointSigner } from '@agent-platform/domain';
import { loadOrCreateSigningKey } from '@agent-platform/registry-core';

/** `<data_dir>/audit-checkpoint-key.pem` unless `[audit.checkpoints] signing_key_file` names one. */
export function checkpointKeyPath(dataDir: string, configured: string): string {
  return configured === '' ? join(dataDir, 'audit-checkpoint-key.pem') : configured;
}

/**
 * The platform's checkpoint key: an Ed25519 PEM (PKCS#8), made at first start with mode 0600
 * (the registry's key loader: the same file format and race handling). Its own key, not the
 * registry's: a checkpoint says "this platform saw this chain".
 */
export async function loadCheckpointSigner(path: string): Promise<CheckpointSigner> {
  const { signer } = await loadOrCreateSigningKey(path);
  const privateKey = signer.privateKey;
  return {
    keyId: signer.publicKey.key_id,
    publicKey: signer.publicKey.public_key,
    publicKeyPem: signer.publicKey.public_key_pem,
    sign: (bytes) => sign(null, bytes, privateKey).toString('base64url'),
  };
}
