import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArchiveStore } from '../archive-store.ts';

/** One fresh, empty store for one test, and a look at the backend underneath it. */
export interface ArchiveStoreUnderTest {
  store: ArchiveStore;
  /**
   * Every object the backend holds, by its own name (file paths relative to the root, S3 object
   * keys of the bucket), sorted. The suite checks that a put leaves exactly the expected object.
   */
  objects(): Promise<string[]>;
  /** The backend's name for `key` (with the prefix, for S3). */
  objectName(key: string): string;
  cleanup(): Promise<void>;
}

export type ArchiveStoreFactory = () => Promise<ArchiveStoreUnderTest>;

/** Bytes that are not text: every byte value, NULs included, then a counter pattern. */
export function binaryBytes(length: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    if (i < 256) bytes[i] = i;
    else {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      bytes[i] = state & 0xff;
    }
  }
  return bytes;
}

export const sameBytes = (a: Uint8Array | null, b: Uint8Array): boolean =>
  a !== null && a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b));

/**
 * The `ArchiveStore` port's conformance suite: every adapter runs it.
 *
 * ```ts
 * archiveStoreConformance('filesystem', async () => {
 *   const root = await mkdtemp(join(tmpdir(), 'archives-'));
 *   return { store: openFsArchiveStore(root), objects: ..., objectName: (key) => key,
 *            cleanup: () => rm(root, { recursive: true, force: true }) };
 * });
 * ```
 *
 * Keys are opaque to the suite beyond being relative `/`-separated paths, as archiveKey makes.
 * Not here: that a reader racing a rewrite of the same key sees old or new bytes whole. For S3
 * that is the server's guarantee (AWS S3 gives it; s3rver, the test server, rewrites in place),
 * so only the filesystem adapter's own tests check it.
 */
export function archiveStoreConformance(name: string, factory: ArchiveStoreFactory): void {
  describe(`archive store conformance: ${name}`, () => {
    let h: ArchiveStoreUnderTest;
    beforeEach(async () => {
      h = await factory();
    });
    afterEach(async () => {
      await h.store.close();
      await h.cleanup();
    });

    it('gives back the very bytes it was given, NULs and high bytes included, as one object', async () => {
      const bytes = binaryBytes(4096);
      await h.store.put('claims-intake/claims-intake-1.2.0.tar.gz', bytes);
      expect(sameBytes(await h.store.get('claims-intake/claims-intake-1.2.0.tar.gz'), bytes)).toBe(true);
      expect(await h.objects()).toEqual([h.objectName('claims-intake/claims-intake-1.2.0.tar.gz')]);
    });

    it('answers null for a key never written, and for a prefix of a written key', async () => {
      expect(await h.store.get('nothing/nothing-1.0.0.tar.gz')).toBeNull();
      await h.store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(10));
      expect(await h.store.get('pkg')).toBeNull();
      expect(await h.store.get('pkg/pkg-1.0.1.tar.gz')).toBeNull();
    });

    it('replaces the bytes of a key written again, longer or shorter', async () => {
      const key = 'pkg/pkg-1.0.0.tar.gz';
      await h.store.put(key, binaryBytes(2000, 1));
      await h.store.put(key, binaryBytes(300, 2));
      expect(sameBytes(await h.store.get(key), binaryBytes(300, 2))).toBe(true);
      await h.store.put(key, binaryBytes(5000, 3));
      expect(sameBytes(await h.store.get(key), binaryBytes(5000, 3))).toBe(true);
      expect(await h.objects()).toEqual([h.objectName(key)]);
    });

    it('deletes a key, and deleting a missing key is fine', async () => {
      await h.store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(100));
      await h.store.put('pkg/pkg-1.1.0.tar.gz', binaryBytes(100, 2));
      await h.store.delete('pkg/pkg-1.0.0.tar.gz');
      expect(await h.store.get('pkg/pkg-1.0.0.tar.gz')).toBeNull();
      expect(sameBytes(await h.store.get('pkg/pkg-1.1.0.tar.gz'), binaryBytes(100, 2))).toBe(true);
      await expect(h.store.delete('pkg/pkg-1.0.0.tar.gz')).resolves.toBeUndefined();
      await expect(h.store.delete('never/never-0.0.1.tar.gz')).resolves.toBeUndefined();
      expect(await h.objects()).toEqual([h.objectName('pkg/pkg-1.1.0.tar.gz')]);
    });

    it('keeps keys of nested paths apart', async () => {
      const keys = ['a/b/c/d.tar.gz', 'a/b.tar.gz', 'a/b/c.tar.gz', 'a-b/c.tar.gz', 'x.tar.gz'];
      for (const [i, key] of keys.entries()) await h.store.put(key, binaryBytes(50 + i, i + 1));
      for (const [i, key] of keys.entries())
        expect(sameBytes(await h.store.get(key), binaryBytes(50 + i, i + 1))).toBe(true);
      await h.store.delete('a/b/c.tar.gz');
      expect(await h.store.get('a/b/c/d.tar.gz')).not.toBeNull();
      expect(await h.objects()).toEqual(
        keys
          .filter((key) => key !== 'a/b/c.tar.gz')
          .map((key) => h.objectName(key))
          .sort(),
      );
    });

    it('stores a 5 MB archive intact', async () => {
      const bytes = binaryBytes(5 * 1024 * 1024, 7);
      await h.store.put('big/big-1.0.0.tar.gz', bytes);
      const back = await h.store.get('big/big-1.0.0.tar.gz');
      expect(back?.length).toBe(bytes.length);
      expect(sameBytes(back, bytes)).toBe(true);
    });

    it('takes concurrent puts of different keys, each keeping its own bytes', async () => {
      const keys = Array.from({ length: 24 }, (_, i) => `pkg-${i % 4}/pkg-${i % 4}-1.0.${i}.tar.gz`);
      await Promise.all(keys.map((key, i) => h.store.put(key, binaryBytes(1000 + i * 37, i + 1))));
      const back = await Promise.all(keys.map((key) => h.store.get(key)));
      back.forEach((bytes, i) => expect(sameBytes(bytes, binaryBytes(1000 + i * 37, i + 1))).toBe(true));
      expect(await h.objects()).toEqual(keys.map((key) => h.objectName(key)).sort());
    });

    it('refuses a key that could leave its root or prefix, and stores nothing for it', async () => {
      for (const key of [
        '../escape.tar.gz',
        'a/../../escape.tar.gz',
        '/etc/escape.tar.gz',
        'a//b.tar.gz',
        './a.tar.gz',
        '',
        'a\\b.tar.gz',
      ]) {
        await expect(h.store.put(key, binaryBytes(10)), `put ${JSON.stringify(key)}`).rejects.toThrow(
          /not an archive key/,
        );
        await expect(h.store.get(key), `get ${JSON.stringify(key)}`).rejects.toThrow(/not an archive key/);
        await expect(h.store.delete(key), `delete ${JSON.stringify(key)}`).rejects.toThrow(
          /not an archive key/,
        );
      }
      expect(await h.objects()).toEqual([]);
    });

    it('reports healthy', async () => {
      expect(await h.store.health()).toEqual({ status: 'ok' });
    });
  });
}
