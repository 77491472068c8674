import { stat } from 'node:fs/promises';
import { Errors, type PlatformError } from '@agent-platform/domain';
import { SnapshotError, type SnapshotSummary } from '@agent-platform/store';
import { inspectSnapshot } from '@agent-platform/store/embedded';
import { ArchiveDamagedError, extractArchive, sha256File } from './backup-files.ts';
import { macMatches, vaultKeyId, type BackupManifest } from './backup-manifest.ts';
import { signatureState, type SignatureState, type TrustedBackupKey } from './backup-signing.ts';

/** Where an archive to restore or verify is: a listed backup, or a file on the platform host. */
export type ArchiveSource = { kind: 'id'; id: string } | { kind: 'path'; path: string };

/** An archive read back whole and checked; what the MAC says is left to the caller to act on. */
export interface VerifiedArchive {
  manifest: BackupManifest;
  checksum: string;
  size: number;
  /** The extracted store snapshot (in the staging directory). */
  storeFile: string;
  summary: SnapshotSummary;
  /** True when the manifest's MAC verifies with this platform's vault key. */
  macValid: boolean;
  /** Why the MAC does not verify: another vault key (foreign, 409) or an altered manifest (400). */
  macRefusal: PlatformError | null;
  /** Its `manifest.sig`, checked against the trusted keys given. */
  signature: SignatureState;
  /**
   * Set when the archive was altered after it was made: its MAC does not verify with the vault key
   * it names as this platform's, or its signature does not verify with the trusted key it names.
   * Such an archive is never applied, whatever the caller allows.
   */
  altered: PlatformError | null;
}

function damaged(message: string): PlatformError {
  return Errors.validation(`the backup archive is damaged or not a backup: ${message}`);
}

/**
 * Reads an archive completely and checks everything that can be checked without touching the
 * store: the checksum (against the one recorded at creation and the caller's), every member's
 * size and sha256, the format, the platform version, the snapshot's soundness, and the MAC.
 */
export async function archiveVerdict(input: {
  path: string;
  staging: string;
  recorded: string | null;
  expected: string | null;
  vaultKey: Buffer;
  version?: string;
  /** Keys whose signature makes a foreign archive acceptable (`[backup] trusted_keys`); none by default. */
  trusted?: readonly TrustedBackupKey[];
}): Promise<VerifiedArchive> {
  const info = await stat(input.path).catch(() => null);
  if (info === null) throw Errors.notFound('backup file', input.path);
  if (!info.isFile()) throw Errors.validation(`${input.path} is not a file`, { field: 'path' });
  // A refusal never names the hash it computed: the file may not be an archive at all (docs/backup.md "Restoring").
  const checksum = await sha256File(input.path);
  if (input.recorded !== null && input.recorded !== checksum)
    throw damaged(`its checksum differs from the ${input.recorded} recorded when it was made`);
  if (input.expected !== null && input.expected !== checksum)
    throw damaged(`its checksum is not the ${input.expected} given`);
  let extracted;
  try {
    extracted = await extractArchive(input.path, input.staging);
  } catch (error) {
    if (error instanceof ArchiveDamagedError) throw damaged(error.message);
    throw error;
  }
  const { manifest } = extracted;
  if (input.version !== undefined && newer(manifest.platform_version, input.version)) {
    throw Errors.validation(
      `backup ${manifest.id} was made by platform ${manifest.platform_version}, newer than this one (${input.version}): restore it with that version or later`,
    );
  }
  let summary: SnapshotSummary;
  try {
    summary = await inspectSnapshot(extracted.storeFile);
  } catch (error) {
    if (error instanceof SnapshotError) throw damaged(error.message);
    throw error;
  }
  const ours = vaultKeyId(input.vaultKey);
  let macRefusal: PlatformError | null = null;
  if (manifest.vault_key_id !== ours) {
    macRefusal = Errors.conflict(
      `backup ${manifest.id} is foreign: it was made with another vault key (${manifest.vault_key_id}; this platform's is ${ours}). Its vault values only open with that key: run the platform with it (docs/backup.md "Into a new data dir")`,
      { archive_vault_key_id: manifest.vault_key_id, vault_key_id: ours },
    );
  } else if (!macMatches(input.vaultKey, extracted.manifestBytes, extracted.mac)) {
    macRefusal = damaged('its manifest does not match its MAC (it was altered after it was made)');
  }
  const signature = signatureState(extracted.manifestBytes, extracted.signature, input.trusted ?? []);
  const altered =
    macRefusal !== null && macRefusal.category !== 'Conflict'
      ? macRefusal
      : signature.state === 'bad'
        ? damaged(
            `its signature does not verify with the key ${signature.keyId} it names (it was altered after it was made)`,
          )
        : null;
  return {
    manifest,
    checksum,
    size: info.size,
    storeFile: extracted.storeFile,
    summary,
    macValid: macRefusal === null,
    macRefusal,
    signature,
    altered,
  };
}

/** True when semver `a` is newer than `b` (major.minor.patch; pre-release tags ignored). */
function newer(a: string, b: string): boolean {
  const parse = (v: string) =>
    v
      .split(/[-+]/)[0]!
      .split('.')
      .map((n) => Number(n) || 0);
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
}

/** What `agent-platform backup verify` reports about an archive file. */
export interface ArchiveReport {
  manifest: BackupManifest;
  checksum: string;
  size: number;
  summary: SnapshotSummary;
  /** `valid`: made with the given vault key and unaltered; `foreign`: another key; `altered`; `unchecked`: no key given. */
  mac: 'valid' | 'foreign' | 'altered' | 'unchecked';
  /** Its `manifest.sig` against the keys given (none: `untrusted` with the signing key id, or `unsigned`). */
  signature: SignatureState;
  /** The audit chain inside the archive, walked in full (null for agents_only). */
  chain: { valid: boolean; entry_count: number; reason: string | null } | null;
}
