import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPackage } from '@agent-platform/packages';

/** The repository's example packages (examples/). */
export const EXAMPLES_DIR = fileURLToPath(new URL('../../../../../examples/', import.meta.url));

/** A platform version newer than any package needs. */
export const ANY_PLATFORM = '999999.0.0';

export interface ExampleChanges {
  /** `[package] version`. */
  version?: string;
  /** The whole `[dependencies]` table. */
  dependencies?: Record<string, string>;
  /** `[package] min_platform_version`. */
  minPlatformVersion?: string;
  /** Appended to the payload file (a different payload, hence a different content hash). */
  appendToPayload?: string;
  /** Any other change to the manifest's text, after the ones above. */
  edit?: (manifest: string) => string;
}

/**
 * The archive of `examples/<name>` with `changes`, built by `buildPackage` in a temp directory:
 * the repository is never written.
 */
export async function exampleArchive(name: string, changes: ExampleChanges = {}): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-example-'));
  try {
    const pkg = join(dir, name);
    await cp(join(EXAMPLES_DIR, name), pkg, { recursive: true });
    const manifestPath = join(pkg, 'package.toml');
    let manifest = await readFile(manifestPath, 'utf8');
    if (changes.version !== undefined) manifest = manifest.replace(/^version = ".*"$/m, `version = "${changes.version}"`);
    if (changes.minPlatformVersion !== undefined)
      manifest = manifest.replace(/^min_platform_version = ".*"$/m, `min_platform_version = "${changes.minPlatformVersion}"`);
    if (changes.dependencies !== undefined) manifest = withDependencies(manifest, changes.dependencies);
    if (changes.edit !== undefined) manifest = changes.edit(manifest);
    await writeFile(manifestPath, manifest);
    if (changes.appendToPayload !== undefined) {
      const payloadDir = join(pkg, 'payload');
      const [file] = await readdir(payloadDir);
      if (file === undefined) throw new Error(`examples/${name} has no payload file`);
      const path = join(payloadDir, file);
      await writeFile(path, `${await readFile(path, 'utf8')}${changes.appendToPayload}`);
    }
    // Any platform: a package for a newer platform is a valid archive, refused only where it installs.
    const built = await buildPackage(pkg, join(dir, 'dist'), { platformVersion: ANY_PLATFORM });
    return new Uint8Array(await readFile(built.archive_path));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function withDependencies(manifest: string, dependencies: Record<string, string>): string {
  const table = ['[dependencies]', ...Object.entries(dependencies).map(([dep, c]) => `${dep} = "${c}"`)].join('\n');
  if (/^\[dependencies\]$/m.test(manifest)) return manifest.replace(/^\[dependencies\]\n(?:[^[\n].*\n)*/m, `${table}\n`);
  return manifest.replace(/^\[signing\]$/m, `${table}\n\n[signing]`);
}
