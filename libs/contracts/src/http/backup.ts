import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of the backup routes (spec §Endpoints "Health and daemon control"; the list item and
 * the restore fields are ours, docs/backup.md).
 */

/** `full`: the whole store. `agents_only`: the agents and what they need to work (docs/backup.md "Scopes"). */
export const BackupScope = Type.Union([Type.Literal('full'), Type.Literal('agents_only')]);
export type BackupScope = Static<typeof BackupScope>;

/** Backup ids: the creation time (UTC, to the millisecond) and 8 random hex digits; they sort by age. */
export const BACKUP_ID_PATTERN = '^[0-9]{8}T[0-9]{9}Z-[0-9a-f]{8}$';
const BackupId = Type.String({
  pattern: BACKUP_ID_PATTERN,
  description: 'A backup id, e.g. 20261127T045111123Z-3f2a1c9e.',
});
const Checksum = Type.String({
  pattern: '^sha256:[0-9a-f]{64}$',
  description: '`sha256:<hex>` of the archive file.',
});

export const BackupCreateBody = Type.Object({ scope: BackupScope }, { additionalProperties: false });
export type BackupCreateBody = Static<typeof BackupCreateBody>;

/** POST /backup/create (200) and each item of GET /backup/list. */
export const BackupView = Type.Object({
  id: BackupId,
  path: Type.String({ description: 'Absolute path of the archive on the platform host.' }),
  scope: BackupScope,
  created_at: Type.String({ description: 'ISO 8601 UTC: the instant the store was copied.' }),
  checksum: Checksum,
  size_bytes: Type.Integer({ minimum: 0 }),
  platform_version: Type.String({ description: 'The version that made the archive.' }),
  installation_id: Type.String({ description: 'The platform installation the archive was made by.' }),
  audit_entry_count: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Audit entries in the archive; null for agents_only.',
  }),
  documents: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
    description: 'Documents per collection in the archive.',
  }),
});
export type BackupView = Static<typeof BackupView>;

export const BackupList = Type.Object({ backups: Type.Array(BackupView, { description: 'Newest first.' }) });
export type BackupList = Static<typeof BackupList>;

export const BackupRestoreBody = Type.Object(
  {
    id: Type.Optional(BackupId),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'An archive file on the platform host (absolute path).',
      }),
    ),
    checksum: Type.Optional(Checksum),
    allow_foreign: Type.Optional(
      Type.Boolean({
        description:
          'Accept an archive of another installation (docs/backup.md "Foreign archives"). Default false.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BackupRestoreBody = Static<typeof BackupRestoreBody>;

/** POST /backup/restore (200). */
export const BackupRestored = Type.Object({
  status: Type.Literal('restored'),
  id: BackupId,
  scope: BackupScope,
  created_at: Type.String({
    description: "The archive's creation time: the state now served is as of then.",
  }),
  restored_at: Type.String(),
  checksum: Checksum,
  audit_entry_count: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Entries of the restored chain, the restore entry included; null for agents_only.',
  }),
  checkpoint: Type.Union([Type.String(), Type.Null()], {
    description: 'The audit checkpoint written for the restored chain; null without a sink.',
  }),
});
export type BackupRestored = Static<typeof BackupRestored>;
