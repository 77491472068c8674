import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuditTrail, systemClock } from '@agent-platform/domain';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { archiveVerdict, type ArchiveReport } from './archive-verdict.ts';

/**
 * Reads an archive file completely and checks it without any platform (`agent-platform backup
 * verify`): checksum, members, format, the snapshot's soundness, the audit chain inside it, and,
 * given the vault key, whose it is. Throws a PlatformError naming what is damaged.
 */
export async function verifyArchiveFile(
  path: string,
  options: { vaultKey: Buffer | null; checksum: string | null; version?: string },
): Promise<ArchiveReport> {
  const staging = await mkdtemp(join(tmpdir(), 'ap-backup-verify-'));
  try {
    const verdict = await archiveVerdict({
      path,
      staging,
      recorded: null,
      expected: options.checksum,
      vaultKey: options.vaultKey ?? randomBytes(32),
      ...(options.version === undefined ? {} : { version: options.version }),
    });
    const mac =
      options.vaultKey === null
        ? 'unchecked'
        : verdict.macValid
          ? 'valid'
          : verdict.macRefusal?.category === 'Conflict'
            ? 'foreign'
            : 'altered';
    let chain: ArchiveReport['chain'] = null;
    if (verdict.manifest.scope === 'full') {
      const store = await openEmbeddedStore({ path: verdict.storeFile });
      try {
        const report = await createAuditTrail({ store, clock: systemClock, enabled: true }).verify({
          full: true,
        });
        const walked = report as { valid: boolean; entry_count: number; first_invalid_reason?: string };
        chain = {
          valid: walked.valid,
          entry_count: walked.entry_count,
          reason: walked.first_invalid_reason ?? null,
        };
      } finally {
        await store.close();
      }
    }
    return {
      manifest: verdict.manifest,
      checksum: verdict.checksum,
      size: verdict.size,
      summary: verdict.summary,
      mac,
      signature: verdict.signature,
      chain,
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
