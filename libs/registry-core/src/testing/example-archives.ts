import { createArchive, readArchive } from '@agent-platform/packages';
import { exampleArchive, type ExampleChanges } from '../client/testing/example-archives.ts';

/** Archives of the repository's example packages, built in a temp dir (the repository is never written). */
export interface ExampleArchives {
  /**
   * `agent-platform package build` of examples/<name> (`exampleArchive`); `version` rewrites the
   * manifest's version, `edit` any other text of it, before the build.
   */
  build(name: string, options?: Pick<ExampleChanges, 'version' | 'edit'>): Promise<Buffer>;
  close(): Promise<void>;
}

export async function openExampleArchives(): Promise<ExampleArchives> {
  return {
    build: async (name, options = {}) => Buffer.from(await exampleArchive(name, options)),
    // Each build removes its own temp dir: nothing is left to close.
    close: async () => {},
  };
}

/** The archive with its files changed by `change` (path -> bytes), repacked: a forgery or a broken build. */
export function repack(archive: Uint8Array, change: (files: Map<string, Uint8Array>) => void): Buffer {
  const files = readArchive(archive);
  change(files);
  return createArchive(files);
}

/** The same package under another name (the manifest's `name` rewritten; the payload, and so its hash, unchanged). */
export function renamed(archive: Uint8Array, name: string): Buffer {
  return repack(archive, (files) => {
    const manifest = new TextDecoder().decode(files.get('package.toml'));
    files.set('package.toml', new TextEncoder().encode(manifest.replace(/^name = ".*"$/m, `name = "${name}"`)));
  });
}
