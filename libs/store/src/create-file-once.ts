import { randomBytes } from 'node:crypto';
import { link, rm, writeFile } from 'node:fs/promises';

/**
 * Creates `path` with `contents` unless it exists, for the files processes make on first start
 * (the vault key, signing keys). The contents go to a private temporary file beside it, which
 * `link` puts in place: `link` fails when the path exists, so processes starting together agree
 * on one file and none reads a half-written one (a file created with `wx` and then written is
 * visible empty in between). Answers true when this call created the file.
 */
export async function createFileOnce(path: string, contents: string, mode: number): Promise<boolean> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, contents, { flag: 'wx', mode });
  try {
    await link(temporary, path);
    return true;
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') throw cause;
    return false;
  } finally {
    await rm(temporary, { force: true });
  }
}
