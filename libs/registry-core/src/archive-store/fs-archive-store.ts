import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { ArchiveStore } from './archive-store.ts';

/**
 * Archives as files under `root` (the default backend). A write goes to a temporary file and is
 * renamed into place, so a reader never sees half an archive, even after a crash mid-write.
 */
export function openFsArchiveStore(root: string): ArchiveStore {
  const base = resolve(root);
  const pathOf = (key: string): string => {
    const path = resolve(base, key);
    if (!path.startsWith(base + sep)) throw new Error(`archive key outside the archive directory: ${key}`);
    return path;
  };
  return {
    async put(key, bytes) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const temporary = join(dirname(path), `.${randomUUID()}.partial`);
      await writeFile(temporary, bytes, { flush: true });
      await rename(temporary, path);
    },
    async get(key) {
      return readFile(pathOf(key)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    async health() {
      try {
        await mkdir(base, { recursive: true });
        return { status: 'ok' };
      } catch (error) {
        return { status: 'down', detail: (error as Error).message };
      }
    },
    async close() {},
  };
}
