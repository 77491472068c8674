import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArchive, loadArchive, readArchive, validateArchive } from './archive.ts';
import { buildPackage } from './build.ts';
import { contentHash } from './content-hash.ts';
import { loadPackage, readPackageDir } from './package-dir.ts';
import { MAX_README_BYTES } from './readme-file.ts';
import { writeMutated } from './testing/mutate.ts';
import { FIXTURES } from './testing/package-fixtures.ts';

// README.md at a package's root (docs/packages.md "README"): carried by the directory reader, the
// build and the archive, exposed on the loaded package, limited in size, outside content_hash.
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-readme-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const options = { platformVersion: '0.1.0' };
const README = '# Claims intake\n\n- first notice of loss\n- triage\n';

describe('README.md in a package', () => {
  it('is read from the directory, built into the archive and loaded back, without a warning', async () => {
    const dir = await writeMutated(root, 'agent', { extra: { 'README.md': README } });
    const loaded = await loadPackage(dir, options);
    expect(loaded.readme).toBe(README);
    expect(loaded.warnings).toEqual([]);

    const built = await buildPackage(dir, join(root, 'out-1'), options);
    expect(built.warnings).toEqual([]);
    const archive = await readFile(built.archive_path);
    expect(new TextDecoder().decode(readArchive(archive).get('README.md'))).toBe(README);
    expect(loadArchive(archive, options).readme).toBe(README);
  });

  it('is not part of content_hash: changing it keeps the hash and the archive still validates', async () => {
    const dir = await writeMutated(root, 'agent', { extra: { 'README.md': README } });
    const built = await buildPackage(dir, join(root, 'out-2'), options);
    expect(built.content_hash).toBe(contentHash(new TextEncoder().encode(FIXTURES.agent.payload)));
    const files = readArchive(await readFile(built.archive_path));
    files.set('README.md', new TextEncoder().encode('# Another README'));
    const report = validateArchive(createArchive(files), options);
    expect(report.problems).toEqual([]);
    expect(report.readme).toBe('# Another README');
    expect(report.content_hash).toBe(built.content_hash);
  });

  it('keeps the archive of a package without a README byte for byte as before (no entry added)', async () => {
    const dir = await writeMutated(root, 'agent');
    const files = await readPackageDir(dir);
    expect([...files.keys()]).not.toContain('README.md');
    expect(loadArchive(createArchive(files), options)).not.toHaveProperty('readme');
  });

  it(`refuses a README over ${MAX_README_BYTES} bytes (rule readme-too-large) and one that is not UTF-8`, async () => {
    const dir = await writeMutated(root, 'agent');
    await writeFile(join(dir, 'README.md'), 'x'.repeat(MAX_README_BYTES + 1));
    const report = validateArchive(createArchive(await readPackageDir(dir)), options);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([expect.objectContaining({ file: 'README.md', field: '(file)', rule: 'readme-too-large' })]);

    await writeFile(join(dir, 'README.md'), 'x'.repeat(MAX_README_BYTES));
    expect((await loadPackage(dir, options)).readme).toHaveLength(MAX_README_BYTES);

    await writeFile(join(dir, 'README.md'), Buffer.from([0x23, 0x20, 0xff, 0xfe]));
    const latin = validateArchive(createArchive(await readPackageDir(dir)), options);
    expect(latin.problems).toEqual([expect.objectContaining({ file: 'README.md', rule: 'utf8' })]);
  });
});
