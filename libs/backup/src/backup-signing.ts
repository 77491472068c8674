import { verify, type KeyObject } from 'node:crypto';

/**
 * `manifest.sig`: the Ed25519 signature of an archive's manifest by the platform that made it
 * (`[backup] signing_key_file`, docs/backup.md "Foreign archives"). The MAC proves an archive to a
 * platform holding the same vault key; the signature proves it to any platform that was given the
 * public key (`[backup] trusted_keys`), which is what lets one platform's archive be restored on
 * another. The manifest carries every member's sha256, so the signature covers the whole archive.
 */

/** The platform's backup signing key: its id and a signer of bytes (base64url). */
export interface BackupSigner {
  keyId: string;
  sign(bytes: Buffer): string;
}

/** A public key a foreign restore trusts (`[backup] trusted_keys`, parsed). */
export interface TrustedBackupKey {
  key_id: string;
  key: KeyObject;
}

/** Whose signature an archive carries, as far as this platform can tell. */
export type SignatureState =
  | { state: 'trusted'; keyId: string }
  | { state: 'unsigned' }
  | { state: 'untrusted'; keyId: string }
  /** Names a trusted key but does not verify with it: the archive was altered. */
  | { state: 'bad'; keyId: string };

const TAG = 'agent-platform-backup-signature-v1\n';

/** The bytes signed: a tag (so that no other signature of the same key can pass for one), then the manifest. */
function statement(manifest: Buffer): Buffer {
  return Buffer.concat([Buffer.from(TAG), manifest]);
}

/** The `manifest.sig` member: `ed25519 <key id> <base64url signature>`. */
export function signatureMember(signer: BackupSigner, manifest: Buffer): Buffer {
  return Buffer.from(`ed25519 ${signer.keyId} ${signer.sign(statement(manifest))}\n`);
}

/** What `manifest.sig` says about `manifest`, checked against the trusted keys. Never throws. */
export function signatureState(
  manifest: Buffer,
  member: string | null,
  trusted: readonly TrustedBackupKey[],
): SignatureState {
  if (member === null) return { state: 'unsigned' };
  const [algorithm, keyId, signature, ...rest] = member.trim().split(' ');
  if (algorithm !== 'ed25519' || keyId === undefined || signature === undefined || rest.length > 0)
    return { state: 'bad', keyId: keyId ?? '(none)' };
  const key = trusted.find((k) => k.key_id === keyId);
  if (key === undefined) return { state: 'untrusted', keyId };
  const bytes = Buffer.from(signature, 'base64url');
  const valid = bytes.length === 64 && verify(null, statement(manifest), key.key, bytes);
  return valid ? { state: 'trusted', keyId } : { state: 'bad', keyId };
}
