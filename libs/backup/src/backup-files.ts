import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKUP_ID_PATTERN } from '@agent-platform/contracts';
import {
  MAC_MEMBER,
  MANIFEST_MEMBER,
  SIG_MEMBER,
  STORE_MEMBER,
  parseManifest,
  type BackupManifest,
} from './backup-manifest.ts';
import { readTarGz, TarFormatError, writeTarGz, type TarMember } from './backup-tar.ts';

/**
 * The backups directory, `<data_dir>/backups`: `<id>.tar.gz` archives, each with its checksum
 * beside it as `<id>.tar.gz.sha256` (`sha256sum -c` reads it). Work in progress is named
 * `.<id>...partial` and never listed: an archive appears under its name only once complete and
 * synced (rename), so a crash mid-backup leaves no half archive, only a partial file that the
 * next backup removes.
 */
export const BACKUPS_DIR = 'backups';
const ARCHIVE = /^(.+)\.tar\.gz$/;
const ID = new RegExp(BACKUP_ID_PATTERN);
/** Partial files untouched this long belong to a backup that died; younger ones may be in progress. */
const STALE_PARTIAL_MS = 60 * 60 * 1000;
const MAX_MANIFEST_BYTES = 1024 * 1024;
const MAX_MAC_BYTES = 1024;

export const archivePath = (dir: string, id: string): string => join(dir, `${id}.tar.gz`);
const sumPath = (dir: string, id: string): string => join(dir, `${id}.tar.gz.sha256`);

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest('hex')}`;
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes `<id>.tar.gz` atomically (partial file, sync, checksum file, rename); returns its checksum and size. */
export async function writeArchive(
  dir: string,
  id: string,
  members: readonly TarMember[],
): Promise<{ path: string; checksum: string; size: number }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const partial = join(dir, `.${id}.tar.gz.partial`);
  const sumPartial = join(dir, `.${id}.sha256.partial`);
  try {
    const written = await writeTarGz(partial, members);
    const sums = await open(sumPartial, 'wx', 0o600);
    try {
      await sums.writeFile(`${written.checksum.slice('sha256:'.length)}  ${id}.tar.gz\n`);
      await sums.sync();
    } finally {
      await sums.close();
    }
    // The checksum first: a listed archive always has its checksum file.
    await rename(sumPartial, sumPath(dir, id));
    await rename(partial, archivePath(dir, id));
    await syncDir(dir);
    return { path: archivePath(dir, id), ...written };
  } catch (error) {
    await Promise.all([rm(partial, { force: true }), rm(sumPartial, { force: true })]);
    throw error;
  }
}

/** Ids of the complete archives in `dir`, newest first. */
export async function archiveIds(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  return names
    .map((name) => ARCHIVE.exec(name)?.[1])
    .filter((id): id is string => id !== undefined && ID.test(id))
    .sort()
    .reverse();
}

/** The recorded checksum of an archive (its `.sha256` file); null when there is none. */
export async function recordedChecksum(dir: string, id: string): Promise<string | null> {
  const text = await readFile(sumPath(dir, id), 'utf8').catch(() => null);
  const hex = text === null ? null : /^([0-9a-f]{64})\s/.exec(text)?.[1];
  return hex === undefined || hex === null ? null : `sha256:${hex}`;
}

/** Removes partial files left by backups or restores that died (untouched for an hour). */
export async function removeStalePartials(dir: string, now: number): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith('.') && n.endsWith('.partial'))) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => null);
    if (info !== null && now - info.mtimeMs > STALE_PARTIAL_MS)
      await rm(path, { recursive: true, force: true });
  }
}

/** An archive read back: its manifest, MAC, and the store snapshot extracted to disk. */
export interface ExtractedArchive {
  manifest: BackupManifest;
  manifestBytes: Buffer;
  mac: string;
  /** The `manifest.sig` text; null when the archive has none (archives of older versions). */
  signature: string | null;
  /** The extracted `store/platform.db`, its sha256 checked against the manifest. */
  storeFile: string;
}

/** The archive is damaged, truncated or not a backup at all; the message says which. */
export class ArchiveDamagedError extends Error {
  override name = 'ArchiveDamagedError';
}

/** Reads only the manifest (the first member) of an archive, for listings. */
export async function readManifest(path: string): Promise<BackupManifest> {
  let bytes: Buffer | null = null;
  const parts: Buffer[] = [];
  await readTarGz(createReadStream(path), {
    begin: (name, size) => {
      if (name !== MANIFEST_MEMBER || size > MAX_MANIFEST_BYTES)
        throw new ArchiveDamagedError(`not a backup archive: its first member is ${name}`);
    },
    data: (chunk) => void parts.push(Buffer.from(chunk)),
    end: () => {
      bytes = Buffer.concat(parts);
      return false;
    },
  }).catch(damaged);
  if (bytes === null) throw new ArchiveDamagedError('not a backup archive: it holds no manifest');
  try {
    return parseManifest(bytes);
  } catch (error) {
    throw new ArchiveDamagedError(`not a readable backup archive: ${(error as Error).message}`);
  }
}

function damaged(error: unknown): never {
  if (error instanceof TarFormatError)
    throw new ArchiveDamagedError(`the archive is damaged: ${error.message}`);
  throw error;
}

/**
 * Reads a whole archive: the manifest and MAC (the first two members), the signature if there is
 * one, then the store snapshot,
 * streamed to `<staging>/platform.db` with its sha256 compared to the manifest's. Refuses any
 * other member, a missing one, a size or hash that differs, a format this version does not read.
 */
export async function extractArchive(path: string, staging: string): Promise<ExtractedArchive> {
  await mkdir(staging, { recursive: true, mode: 0o700 });
  const storeFile = join(staging, 'platform.db');
  const order = [MANIFEST_MEMBER, MAC_MEMBER, SIG_MEMBER, STORE_MEMBER];
  const optional = new Set([SIG_MEMBER]);
  let next = 0;
  const seen: Array<{ name: string; size: number; sha256: string }> = [];
  const small: Record<string, Buffer[]> = { [MANIFEST_MEMBER]: [], [MAC_MEMBER]: [], [SIG_MEMBER]: [] };
  let current: { name: string; size: number; hash: ReturnType<typeof createHash> } | null = null;
  const out = await open(storeFile, 'w', 0o600);
  try {
    await readTarGz(createReadStream(path), {
      begin: (name, size) => {
        while (optional.has(order[next]!) && name !== order[next]) next += 1;
        const expected = order[next];
        if (name !== expected) {
          throw new ArchiveDamagedError(
            expected === undefined
              ? `the archive holds an unexpected member ${name}`
              : `not a backup archive: member ${seen.length + 1} is ${name}, expected ${expected}`,
          );
        }
        next += 1;
        const limit =
          name === MANIFEST_MEMBER
            ? MAX_MANIFEST_BYTES
            : name === MAC_MEMBER || name === SIG_MEMBER
              ? MAX_MAC_BYTES
              : Number.MAX_SAFE_INTEGER;
        if (size > limit) throw new ArchiveDamagedError(`member ${name} is too large (${size} bytes)`);
        current = { name, size, hash: createHash('sha256') };
      },
      data: async (chunk) => {
        const member = current!;
        member.hash.update(chunk);
        if (member.name === STORE_MEMBER) await out.write(chunk);
        else small[member.name]!.push(Buffer.from(chunk));
      },
      end: () => {
        const member = current!;
        seen.push({ name: member.name, size: member.size, sha256: `sha256:${member.hash.digest('hex')}` });
        current = null;
      },
    }).catch(damaged);
    await out.sync();
  } finally {
    await out.close();
  }
  const missing = order.find((name) => !optional.has(name) && !seen.some((m) => m.name === name));
  if (missing !== undefined) throw new ArchiveDamagedError(`the archive ends before member ${missing}`);
  const manifestBytes = Buffer.concat(small[MANIFEST_MEMBER]!);
  let manifest: BackupManifest;
  try {
    manifest = parseManifest(manifestBytes);
  } catch (error) {
    throw new ArchiveDamagedError(`not a readable backup archive: ${(error as Error).message}`);
  }
  const listed = new Map(manifest.members.map((m) => [m.name, m]));
  const stored = seen.find((m) => m.name === STORE_MEMBER)!;
  const declared = listed.get(STORE_MEMBER);
  if (listed.size !== 1 || declared === undefined)
    throw new ArchiveDamagedError(
      `the manifest lists members ${[...listed.keys()].join(', ')}, expected ${STORE_MEMBER}`,
    );
  if (declared.size_bytes !== stored.size || declared.sha256 !== stored.sha256) {
    throw new ArchiveDamagedError(
      `member ${STORE_MEMBER} does not match the manifest (sha256 ${stored.sha256}, the manifest says ${declared.sha256})`,
    );
  }
  const signed = seen.some((m) => m.name === SIG_MEMBER);
  return {
    manifest,
    manifestBytes,
    mac: Buffer.concat(small[MAC_MEMBER]!).toString('utf8'),
    signature: signed ? Buffer.concat(small[SIG_MEMBER]!).toString('utf8') : null,
    storeFile,
  };
}
