import { stat } from 'node:fs/promises';
import { Errors, type PlatformError } from '@agent-platform/domain';
import { SnapshotError, type SnapshotSummary } from '@agent-platform/store';
import { inspectSnapshot } from '@agent-platform/store/embedded';
import { ArchiveDamagedError, extractArchive, sha256File } from './backup-files.ts';
import { macMatches, vaultKeyId, type BackupManifest } from './backup-manifest.ts';

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
}): Promise<VerifiedArchive> {
  const info = await stat(input.path).catch(() => null);
  if (info === null) throw Errors.notFound('backup file', input.path);
  if (!info.isFile()) throw Errors.validation(`${input.path} is not a file`, { field: 'path' });
  const checksum = await sha256File(input.path);
  if (input.recorded !== null && input.recorded !== checksum)
    throw damaged(`its checksum is ${checksum}, but ${input.recorded} was recorded when it was made`);
  if (input.expected !== null && input.expected !== checksum)
    throw damaged(`its checksum is ${checksum}, not the ${input.expected} given`);
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
  return {
    manifest,
    checksum,
    size: info.size,
    storeFile: extracted.storeFile,
    summary,
    macValid: macRefusal === null,
    macRefusal,
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
  /** The audit chain inside the archive, walked in full (null for agents_only). */
  chain: { valid: boolean; entry_count: number; reason: string | null } | null;
}
