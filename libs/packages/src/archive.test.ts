import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArchive, loadArchive, readArchive, validateArchive } from './archive.ts';
import { PackageError } from './package-error.ts';
import { readPackageDir } from './package-dir.ts';
import { writeTar } from './tar.ts';
import { writeMutated } from './testing/mutate.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-archive-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);

/** GNU or BSD tar, present on every CI image and developer machine this project targets. */
function systemTar(): string {
  try {
    execFileSync('tar', ['--version'], { stdio: 'ignore' });
    return 'tar';
  } catch {
    throw new Error('the tar command is needed to check archive compatibility; install tar');
  }
}

function archiveError(fn: () => unknown): PackageError {
  try {
    fn();
  } catch (error) {
    if (error instanceof PackageError) return error;
    throw error;
  }
  throw new Error('expected a PackageError');
}

/** A tar with one entry whose type flag is `type`, its header checksum fixed up. */
function tarWithEntryType(path: string, type: string): Buffer {
  const tar = writeTar([{ path, bytes: new TextEncoder().encode('x') }]);
  tar[156] = type.charCodeAt(0);
  tar.fill(32, 148, 156);
  const sum = tar.subarray(0, 512).reduce((total, byte) => total + byte, 0);
  tar.set(new TextEncoder().encode(`${sum.toString(8).padStart(6, '0')}\0 `), 148);
  return gzipSync(tar);
}

describe('package archives', () => {
  it('round-trips a package: same paths, same bytes', async () => {
    const files = await readPackageDir(await writeMutated(root, 'workflow'));
    const back = readArchive(createArchive(files));
    expect([...back.keys()]).toEqual(['package.toml', 'payload/', 'payload/workflow.json']);
    expect(text(back.get('package.toml'))).toBe(text(files.get('package.toml')));
    expect(
      Buffer.from(back.get('payload/workflow.json')!).equals(
        Buffer.from(files.get('payload/workflow.json')!),
      ),
    ).toBe(true);
    expect(validateArchive(createArchive(files), { platformVersion: '0.1.0' }).ok).toBe(true);
  });

  it('is reproducible: the same files give the same bytes', async () => {
    const files = await readPackageDir(await writeMutated(root, 'agent'));
    expect(createArchive(files).equals(createArchive(new Map(files)))).toBe(true);
  });

  it('is read by the tar command', async () => {
    const files = await readPackageDir(await writeMutated(root, 'agent'));
    const out = join(root, 'extracted');
    await mkdir(out);
    execFileSync(systemTar(), ['-xzf', '-', '-C', out], { input: createArchive(files) });
    expect(await readFile(join(out, 'package.toml'), 'utf8')).toBe(text(files.get('package.toml')));
    expect(await readFile(join(out, 'payload/AGENT.md'), 'utf8')).toBe(text(files.get('payload/AGENT.md')));
  });

  it('reads an archive made by the tar command around the package directory', async () => {
    const dir = await writeMutated(root, 'contract');
    const archive = execFileSync(systemTar(), ['-czf', '-', '-C', root, dir.slice(root.length + 1)]);
    const files = readArchive(archive);
    expect([...files.keys()].sort()).toEqual(['package.toml', 'payload/', 'payload/CONTRACT.json']);
    expect(loadArchive(archive, { platformVersion: '0.1.0' }).manifest.package.name).toBe('claims-system');
  });

  it.each(['gnu', 'pax', 'ustar', 'oldgnu'])(
    'reads what GNU tar writes in its %s format, long names included',
    async (format) => {
      const long = `docs/${'n'.repeat(format === 'ustar' ? 90 : 150)}.md`;
      const dir = await writeMutated(root, 'agent', { extra: { [long]: '# notes' } });
      const archive = execFileSync(systemTar(), [`--format=${format}`, '-czf', '-', '-C', dir, '.']);
      const report = validateArchive(archive, { platformVersion: '0.1.0' });
      expect(report.problems).toEqual([]);
      expect(report.warnings.map((w) => w.file).sort()).toEqual(['docs/', long]);
    },
  );

  it('warns about, and ignores, files outside package.toml, README.md and payload/', async () => {
    const dir = await writeMutated(root, 'agent', { extra: { 'NOTES.txt': 'claims intake', 'README.md': '# claims intake' } });
    const report = validateArchive(execFileSync(systemTar(), ['-czf', '-', '-C', dir, '.']), {
      platformVersion: '0.1.0',
    });
    expect(report.ok).toBe(true);
    expect(report.warnings).toEqual([
      expect.objectContaining({ file: 'NOTES.txt', field: '(file)', rule: 'ignored-file' }),
    ]);
    expect(report.readme).toBe('# claims intake');
  });

  it('keeps paths longer than 100 bytes', () => {
    const long = `payload/${'d'.repeat(80)}/${'f'.repeat(90)}.json`;
    const back = readArchive(gzipSync(writeTar([{ path: long, bytes: new TextEncoder().encode('{}') }])));
    expect(text(back.get(long))).toBe('{}');
  });

  it.each(['../evil', '/etc/passwd', 'payload/../../evil'])('refuses the unsafe path %s', (path) => {
    const error = archiveError(() => readArchive(gzipSync(writeTar([{ path, bytes: new Uint8Array([1]) }]))));
    expect(error.problems).toEqual([
      expect.objectContaining({ rule: 'archive', message: expect.stringContaining('unsafe path') }),
    ]);
  });

  it.each([
    ['2', 'a symbolic link'],
    ['1', 'a hard link'],
    ['3', 'a character device'],
  ])('refuses an entry of type %s (%s)', (type) => {
    const error = archiveError(() => readArchive(tarWithEntryType('payload/AGENT.md', type)));
    expect(error.problems[0]?.message).toContain(`unsupported tar entry type '${type}'`);
  });

  it('refuses bytes that are not gzip, a corrupt header and content over the limit', () => {
    expect(archiveError(() => readArchive(new TextEncoder().encode('not gzip'))).problems[0]?.rule).toBe(
      'archive',
    );
    const corrupt = writeTar([{ path: 'package.toml', bytes: new Uint8Array([1]) }]);
    corrupt[0] = 'X'.charCodeAt(0);
    expect(archiveError(() => readArchive(gzipSync(corrupt))).problems[0]?.message).toContain('checksum');
    const big = gzipSync(writeTar([{ path: 'payload/AGENT.md', bytes: new Uint8Array(4096) }]));
    expect(archiveError(() => readArchive(big, 1024)).problems[0]?.message).toBe(
      'archive content exceeds 1024 bytes (the entry at offset 0 declares 4096 bytes, after 0 before it)',
    );
    const bomb = gzipSync(new Uint8Array(4 * 1024 * 1024));
    expect(archiveError(() => readArchive(bomb, 1024)).problems[0]?.message).toMatch(
      /^archive content exceeds 1024 bytes \(the gzip stream unpacks to more than \d+\)$/,
    );
  });

  it('reports an unreadable archive as a problem from validateArchive', () => {
    expect(validateArchive(new Uint8Array([1, 2, 3])).problems).toEqual([
      expect.objectContaining({ file: '(archive)', rule: 'archive' }),
    ]);
  });
});
