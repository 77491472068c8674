import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openFsArchiveStore } from './fs-archive-store.ts';
import { archiveStoreConformance, binaryBytes, sameBytes } from './testing/archive-store-conformance.ts';

/** Every file under `root` (dot files included), relative, sorted; none when root is absent. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}

archiveStoreConformance('filesystem', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ap-archives-'));
  const root = join(dir, 'archives');
  return {
    store: openFsArchiveStore(root),
    objects: () => filesUnder(root),
    objectName: (key) => key,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('filesystem archive store', () => {
  const dirs: string[] = [];
  const scratch = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ap-archives-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(async () => {
    for (const dir of dirs.splice(0)) {
      await chmod(dir, 0o755).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('makes its directory at the first put, and keeps an archive as a file named by its key', async () => {
    const root = join(await scratch(), 'deep', 'archives');
    const store = openFsArchiveStore(root);
    await store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(64));
    expect(await filesUnder(root)).toEqual(['pkg/pkg-1.0.0.tar.gz']);
  });

  it('reports down, naming the directory, when the archive directory cannot be made', async () => {
    const dir = await scratch();
    await writeFile(join(dir, 'not-a-dir'), 'a file where the directory should be');
    const store = openFsArchiveStore(join(dir, 'not-a-dir', 'archives'));
    const health = await store.health();
    expect(health.status).toBe('down');
    expect(health.detail).toContain(join(dir, 'not-a-dir', 'archives'));
  });

  it('leaves no temporary file behind when a put fails, and keeps the old bytes', async () => {
    const root = join(await scratch(), 'archives');
    const store = openFsArchiveStore(root);
    await store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(64, 1));
    // A directory where the archive's file should go makes the rename fail after the write.
    await mkdir(join(root, 'pkg', 'pkg-2.0.0.tar.gz'));
    await expect(store.put('pkg/pkg-2.0.0.tar.gz', binaryBytes(64, 2))).rejects.toThrow();
    expect(await filesUnder(root)).toEqual(['pkg/pkg-1.0.0.tar.gz']);
  });

  it('gives a reader of a key being rewritten the old or the new bytes, never a mix', async () => {
    const root = join(await scratch(), 'archives');
    const store = openFsArchiveStore(root);
    const key = 'pkg/pkg-1.0.0.tar.gz';
    const [first, second, third] = [
      binaryBytes(2 << 20, 1),
      binaryBytes(2 << 20, 2),
      binaryBytes(2 << 20, 3),
    ];
    await store.put(key, first);
    const reads: (Uint8Array | null)[] = [];
    await Promise.all([
      store.put(key, second),
      store.put(key, third),
      ...Array.from({ length: 12 }, async () => reads.push(await store.get(key))),
    ]);
    for (const read of reads)
      expect([first, second, third].some((bytes) => sameBytes(read, bytes))).toBe(true);
    const final = await store.get(key);
    expect(sameBytes(final, second) || sameBytes(final, third)).toBe(true);
    expect(await filesUnder(root)).toEqual([key]);
  });
});
