import { createHash } from 'node:crypto';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArchive, validateArchive } from './archive.ts';
import { buildPackage } from './build.ts';
import { contentHash } from './content-hash.ts';
import { PackageError } from './package-error.ts';
import { validatePackage } from './package-dir.ts';
import { setKey, writeMutated } from './testing/mutate.ts';
import { FIXTURES } from './testing/package-fixtures.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-build-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const options = { platformVersion: '0.1.0' };

describe('buildPackage', () => {
  it('writes the payload hash into package.toml and the archive into <dir>/dist', async () => {
    const dir = await writeMutated(root, 'agent');
    const result = await buildPackage(dir, undefined, options);

    const hash = contentHash(new TextEncoder().encode(FIXTURES.agent.payload));
    expect(result.content_hash).toBe(hash);
    expect(result.manifest_updated).toBe(true);
    expect(await readFile(join(dir, 'package.toml'), 'utf8')).toBe(
      `${FIXTURES.agent.manifest}\n[signing]\ncontent_hash = "${hash}"\n`,
    );

    expect(result.archive_path).toBe(join(dir, 'dist', 'claims-intake-1.2.0.tar.gz'));
    const archive = await readFile(result.archive_path);
    expect(result.sha256).toBe(createHash('sha256').update(archive).digest('hex'));
    const files = readArchive(archive);
    expect(new TextDecoder().decode(files.get('package.toml'))).toContain(`content_hash = "${hash}"`);
    const report = validateArchive(archive, options);
    expect(report.problems).toEqual([]);
    expect(report.manifest?.signing?.content_hash).toBe(hash);
    expect((await validatePackage(dir, options)).ok).toBe(true);
  });

  it('is reproducible: a second build changes nothing and gives the same archive', async () => {
    const dir = await writeMutated(root, 'skill');
    const first = await buildPackage(dir, join(root, 'out-a'), options);
    const manifest = await readFile(join(dir, 'package.toml'), 'utf8');
    const second = await buildPackage(dir, join(root, 'out-b'), options);
    expect(second.manifest_updated).toBe(false);
    expect(await readFile(join(dir, 'package.toml'), 'utf8')).toBe(manifest);
    expect(second.sha256).toBe(first.sha256);
    expect(second.archive_path).toBe(join(root, 'out-b', 'summarize-1.2.0.tar.gz'));
  });

  it('refreshes a stale hash in place after the payload changed', async () => {
    const dir = await writeMutated(root, 'contract');
    await buildPackage(dir, undefined, options);
    const before = await readFile(join(dir, 'package.toml'), 'utf8');
    const payload = FIXTURES.contract.payload.replace('Open a claim.', 'Open a new claim.');
    await writeFile(join(dir, 'payload/CONTRACT.json'), payload);
    expect((await validatePackage(dir, options)).problems).toEqual([
      expect.objectContaining({ rule: 'content-hash-mismatch' }),
    ]);

    const result = await buildPackage(dir, undefined, options);
    const after = await readFile(join(dir, 'package.toml'), 'utf8');
    expect(result.manifest_updated).toBe(true);
    expect(after).toBe(before.replace(/sha256:[0-9a-f]{64}/, contentHash(new TextEncoder().encode(payload))));
    expect((await validatePackage(dir, options)).ok).toBe(true);
  });

  it('refuses an invalid package: PackageError, package.toml untouched, no archive', async () => {
    const dir = await writeMutated(root, 'agent', { manifest: setKey('version', '"1.0"') });
    const before = await readFile(join(dir, 'package.toml'), 'utf8');
    const error = await buildPackage(dir, undefined, options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageError);
    expect((error as PackageError).problems).toEqual([
      expect.objectContaining({ field: 'package.version', rule: 'semver' }),
    ]);
    expect(await readFile(join(dir, 'package.toml'), 'utf8')).toBe(before);
    await expect(access(join(dir, 'dist'))).rejects.toThrow();
  });
});
