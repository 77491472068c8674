export {
  createBackupService,
  newBackupId,
  type Actor,
  type BackupService,
  type BackupServiceDeps,
  type RestoreOptions,
} from './backup-service.ts';
export type { ArchiveSource, VerifiedArchive } from './archive-verdict.ts';
export {
  AGENT_COLLECTIONS,
  AGENT_COUNTER_PREFIXES,
  KEEP_HIGHER_COUNTER_PREFIXES,
  storePartOf,
} from './backup-scopes.ts';
export { BACKUP_FORMAT, vaultKeyId, type BackupManifest } from './backup-manifest.ts';
export { BACKUPS_DIR } from './backup-files.ts';
export { ensureInstallationId, installationIdOf } from './installation.ts';
export type { ArchiveReport } from './archive-verdict.ts';
export { verifyArchiveFile } from './verify-archive.ts';
export type { BackupSigner, SignatureState, TrustedBackupKey } from './backup-signing.ts';
