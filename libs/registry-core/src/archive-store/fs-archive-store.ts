import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { checkArchiveKey, type ArchiveStore } from './archive-store.ts';

/**
 * Archives as files under `root` (the default backend; docs/registry-storage.md). A write goes to
 * a temporary file beside its target (`.<uuid>.partial`), is flushed, renamed into place and the
 * directory flushed, so a reader never sees half an archive, even after a crash mid-write (which
 * leaves at most a `.partial` file behind, never a damaged archive).
 */
export function openFsArchiveStore(root: string): ArchiveStore {
  const base = resolve(root);
  const pathOf = (key: string): string => {
    checkArchiveKey(key);
    const path = resolve(base, key);
    if (!path.startsWith(base + sep)) throw new Error(`archive key outside the archive directory: ${key}`);
    return path;
  };
  return {
    async put(key, bytes) {
      const path = pathOf(key);
      const dir = dirname(path);
      await mkdir(dir, { recursive: true });
      const temporary = join(dir, `.${randomUUID()}.partial`);
      try {
        await writeFile(temporary, bytes, { flush: true });
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      await syncDir(dir);
    },
    async get(key) {
      return readFile(pathOf(key)).then(
        (buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength),
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT' || error.code === 'EISDIR') return null;
          throw error;
        },
      );
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    async health() {
      const probe = join(base, `.health-${randomUUID()}`);
      try {
        await mkdir(base, { recursive: true });
        await writeFile(probe, '');
        await rm(probe, { force: true });
        return { status: 'ok' };
      } catch (error) {
        return {
          status: 'down',
          detail: `archive directory ${base} is not writable: ${(error as Error).message}`,
        };
      }
    },
    async close() {},
  };
}

/** Makes a rename in `dir` durable (a power loss after put returns keeps the archive). */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
