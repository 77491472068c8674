import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPackage, createArchive, readArchive } from '@agent-platform/packages';

const EXAMPLES = fileURLToPath(new URL('../../../../examples/', import.meta.url));

/** Archives of the repository's example packages, built in a temp dir (the repository is never written). */
export interface ExampleArchives {
  /**
   * `agent-platform package build` of examples/<name>, copied first; `version` rewrites the
   * manifest's version, `edit` any other text of it, before the build.
   */
  build(name: string, options?: { version?: string; edit?: (manifest: string) => string }): Promise<Buffer>;
  close(): Promise<void>;
}

export async function openExampleArchives(): Promise<ExampleArchives> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-registry-archives-'));
  let count = 0;
  return {
    async build(name, options = {}) {
      const copy = join(dir, `${name}-${++count}`);
      await cp(join(EXAMPLES, name), copy, { recursive: true });
      const manifestPath = join(copy, 'package.toml');
      let manifest = await readFile(manifestPath, 'utf8');
      if (options.version !== undefined)
        manifest = manifest.replace(/^version = ".*"$/m, `version = "${options.version}"`);
      if (options.edit !== undefined) manifest = options.edit(manifest);
      await writeFile(manifestPath, manifest);
      // Built for any platform (a registry accepts packages for newer ones): the registry's own
      // validation is what the tests exercise.
      const built = await buildPackage(copy, join(copy, 'dist'), { platformVersion: '' });
      return readFile(built.archive_path);
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The archive with its files changed by `change` (path -> bytes), repacked: a forgery or a broken build. */
export function repack(archive: Uint8Array, change: (files: Map<string, Uint8Array>) => void): Buffer {
  const files = readArchive(archive);
  change(files);
  return createArchive(files);
}
