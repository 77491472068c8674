import { contentHash, createArchive, readArchive, setContentHash } from '@agent-platform/packages';
import { exampleArchive } from '@agent-platform/registry-core/testing';

/** The example every publish of the bench is made from: a prompt-only skill (one SKILL.md). */
export const PUBLISH_EXAMPLE = 'loss-summary';
/** Package names the archives cycle through: the first publish of each claims it, later ones add versions. */
export const PUBLISH_NAMES = 200;

const MANIFEST = 'package.toml';

/**
 * `count` distinct archives a registry accepts, built before any timing: examples/loss-summary
 * built once with `buildPackage` (`exampleArchive`, in a temp copy), then for archive `i` the name
 * `publish-bench-<i % names>`, the version `1.<floor(i / names)>.0`, one line appended to the
 * payload (so each archive has its own content), `[signing] content_hash` set to the new payload's
 * hash with `setContentHash`, packed with `createArchive`. Publishing them in order makes the
 * first `names` publishes new packages and the rest new versions of them.
 */
export async function buildPublishArchives(count: number, names = PUBLISH_NAMES): Promise<Buffer[]> {
  const files = readArchive(await exampleArchive(PUBLISH_EXAMPLE));
  const payloadPath = [...files.keys()].find((path) => path.startsWith('payload/') && !path.endsWith('/'));
  if (payloadPath === undefined) throw new Error(`examples/${PUBLISH_EXAMPLE} has no payload file`);
  const manifest = new TextDecoder().decode(files.get(MANIFEST));
  const payload = new TextDecoder().decode(files.get(payloadPath));
  const encoder = new TextEncoder();

  const archives: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const name = `publish-bench-${i % names}`;
    const version = `1.${Math.floor(i / names)}.0`;
    const body = encoder.encode(`${payload}\n<!-- bench archive ${i} -->\n`);
    const text = setContentHash(
      manifest
        .replace(/^name = ".*"$/m, `name = "${name}"`)
        .replace(/^version = ".*"$/m, `version = "${version}"`),
      contentHash(body),
    );
    archives.push(createArchive(new Map(files).set(MANIFEST, encoder.encode(text)).set(payloadPath, body)));
  }
  return archives;
}
