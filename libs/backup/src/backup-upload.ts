import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Errors } from '@agent-platform/domain';
import { archiveVerdict } from './archive-verdict.ts';
import { archivePath, recordedChecksum } from './backup-files.ts';

/**
 * An uploaded archive joins the backups directory under its manifest's id once it reads back
 * whole (checksum, members, format, snapshot); whose it is (MAC, installation) is checked when it
 * is restored. The same archive uploaded twice is one backup; another archive with the same id
 * is refused.
 */
export async function importUpload(input: {
  dir: string;
  body: NodeJS.ReadableStream;
  expected: string | null;
  vaultKey: Buffer;
  now: number;
}): Promise<string> {
  await mkdir(input.dir, { recursive: true, mode: 0o700 });
  const token = randomUUID();
  const partial = join(input.dir, `.upload-${token}.tar.gz.partial`);
  const staging = join(input.dir, `.upload-${token}.partial`);
  try {
    await pipeline(
      input.body as Readable,
      createWriteStream(partial, { flags: 'wx', mode: 0o600, flush: true }),
    );
    const verdict = await archiveVerdict({
      path: partial,
      staging,
      recorded: null,
      expected: input.expected,
      vaultKey: input.vaultKey,
    });
    const { id } = verdict.manifest;
    const target = archivePath(input.dir, id);
    if ((await stat(target).catch(() => null)) !== null) {
      if ((await recordedChecksum(input.dir, id)) === verdict.checksum) return id;
      throw Errors.conflict(`a different backup with id ${id} is already in the backups directory`, { id });
    }
    await writeFile(`${target}.sha256`, `${verdict.checksum.slice('sha256:'.length)}  ${id}.tar.gz\n`, {
      mode: 0o600,
      flush: true,
    });
    await rename(partial, target);
    const handle = await open(input.dir, 'r');
    await handle.sync().finally(() => handle.close());
    return id;
  } finally {
    await Promise.all([rm(partial, { force: true }), rm(staging, { recursive: true, force: true })]);
  }
}
