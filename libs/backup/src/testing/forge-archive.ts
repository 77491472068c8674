import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractArchive, sha256File } from '../backup-files.ts';
import {
  MAC_MEMBER,
  MANIFEST_MEMBER,
  SIG_MEMBER,
  STORE_MEMBER,
  type BackupManifest,
} from '../backup-manifest.ts';
import { signatureMember, type BackupSigner } from '../backup-signing.ts';
import { writeTarGz, type TarMember } from '../backup-tar.ts';

/** What a forger changes in an archive it unpacked; members it leaves alone are copied as they were. */
export interface Forgery {
  /** Edits the extracted store snapshot in place (the manifest's member hash is updated to match). */
  store?: (file: string) => Promise<void>;
  manifest?: (manifest: BackupManifest) => BackupManifest;
  /** The `manifest.mac` text to write. */
  mac?: string;
  /** The `manifest.sig` text to write; null drops it. */
  signature?: string | null;
  /** Signs the forged manifest with this key (a trusted platform's key, stolen or misused). */
  sign?: BackupSigner;
}

/**
 * Unpacks `archive`, applies `forgery` and packs the result at `out`, as an operator with `tar`
 * and `sqlite3` could: the member hashes in the manifest match, whatever else does not. For the
 * tests of hostile and foreign archives (docs/backup.md "Foreign archives").
 */
export async function forgeArchive(archive: string, out: string, forgery: Forgery): Promise<string> {
  const staging = await mkdtemp(join(tmpdir(), 'ap-backup-forge-'));
  try {
    const extracted = await extractArchive(archive, staging);
    await forgery.store?.(extracted.storeFile);
    const size = (await stat(extracted.storeFile)).size;
    const members = [{ name: STORE_MEMBER, size_bytes: size, sha256: await sha256File(extracted.storeFile) }];
    const manifest = (forgery.manifest ?? ((m) => m))({ ...extracted.manifest, members });
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    const signature =
      forgery.sign !== undefined
        ? signatureMember(forgery.sign, manifestBytes).toString()
        : forgery.signature === undefined
          ? extracted.signature
          : forgery.signature;
    const parts: TarMember[] = [
      { name: MANIFEST_MEMBER, bytes: manifestBytes },
      { name: MAC_MEMBER, bytes: Buffer.from(forgery.mac ?? extracted.mac) },
      ...(signature === null ? [] : [{ name: SIG_MEMBER, bytes: Buffer.from(signature) }]),
      { name: STORE_MEMBER, file: extracted.storeFile, size },
    ];
    await writeTarGz(out, parts);
    return out;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
