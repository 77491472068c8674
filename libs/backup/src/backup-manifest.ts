import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { BACKUP_ID_PATTERN, BackupScope } from '@agent-platform/contracts';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

/** The archive format this version writes and reads. */
export const BACKUP_FORMAT = 'agent-platform-backup/1';

export const MANIFEST_MEMBER = 'manifest.json';
export const MAC_MEMBER = 'manifest.mac';
/** Optional, between the MAC and the store: the platform's Ed25519 signature of the manifest (backup-signing.ts). */
export const SIG_MEMBER = 'manifest.sig';
export const STORE_MEMBER = 'store/platform.db';

const Sha256 = Type.String({ pattern: '^sha256:[0-9a-f]{64}$' });
const Counts = Type.Record(Type.String(), Type.Integer({ minimum: 0 }));

/** `manifest.json`, the archive's first member (docs/backup.md "Archive format"). */
export const BackupManifest = Type.Object({
  format: Type.String(),
  id: Type.String({ pattern: BACKUP_ID_PATTERN }),
  scope: BackupScope,
  created_at: Type.String(),
  platform_version: Type.String(),
  installation_id: Type.String(),
  vault_key_id: Type.String(),
  store: Type.Object({ collections: Counts, logs: Counts, counters: Type.Integer({ minimum: 0 }) }),
  audit: Type.Union([
    Type.Object({
      entry_count: Type.Integer({ minimum: 0 }),
      tip_hash: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  members: Type.Array(
    Type.Object({ name: Type.String(), size_bytes: Type.Integer({ minimum: 0 }), sha256: Sha256 }),
  ),
});
export type BackupManifest = Static<typeof BackupManifest>;

/** Parses and checks `manifest.json`; the message of a throw says what is wrong. */
export function parseManifest(bytes: Buffer): BackupManifest {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new Error('its manifest is not JSON');
  }
  const format = (value as { format?: unknown } | null)?.format;
  if (format !== BACKUP_FORMAT) {
    throw new Error(`its format is ${JSON.stringify(format)}, and this platform reads ${BACKUP_FORMAT} only`);
  }
  if (!Value.Check(BackupManifest, value)) {
    const first = [...Value.Errors(BackupManifest, value)][0];
    throw new Error(
      `its manifest is malformed (${first?.instancePath || '/'}: ${first?.message ?? 'invalid'})`,
    );
  }
  return value;
}

function derive(vaultKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), `agent-platform ${purpose}`, 32));
}

/**
 * Names a vault key without revealing it: `sha256:` + 32 hex digits of an HMAC keyed by a key
 * derived from it. Two archives (or an archive and a platform) with the same id have the same key.
 */
export function vaultKeyId(vaultKey: Buffer): string {
  return `sha256:${createHmac('sha256', derive(vaultKey, 'vault key id v1')).update('vault key id').digest('hex').slice(0, 32)}`;
}

/**
 * `manifest.mac`: HMAC-SHA256 of the manifest's bytes under a key derived from the vault key. It
 * proves the archive was made by a platform holding this vault key and not altered since; the
 * manifest in turn carries the sha256 of every other member.
 */
export function manifestMac(vaultKey: Buffer, manifest: Buffer): string {
  return `hmac-sha256:${createHmac('sha256', derive(vaultKey, 'backup manifest v1')).update(manifest).digest('hex')}`;
}

export function macMatches(vaultKey: Buffer, manifest: Buffer, mac: string): boolean {
  const expected = Buffer.from(manifestMac(vaultKey, manifest));
  const given = Buffer.from(mac.trim());
  return expected.length === given.length && timingSafeEqual(expected, given);
}
