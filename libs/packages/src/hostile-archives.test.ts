import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadArchive, MAX_ARCHIVE_CONTENT_BYTES, readArchive, validateArchive } from './archive.ts';
import { PackageError } from './package-error.ts';
import { FIXTURES } from './testing/package-fixtures.ts';
import {
  concat,
  END_OF_ARCHIVE,
  gnuLongName,
  gzTar,
  hostileArchives,
  paxEntry,
  rawEntry,
  validPackageEntries,
} from './testing/hostile-archives.ts';

const options = { platformVersion: '0.1.0' };
const escape = `ap-hostile-escape-${randomUUID()}`;
const corpus = hostileArchives(escape);

/** Generous bounds: a refusal takes milliseconds and at most the content limit's worth of memory. */
const MAX_MS = 3_000;
const MAX_GROWTH = MAX_ARCHIVE_CONTENT_BYTES * 4;

function refusal(archive: Uint8Array): PackageError {
  try {
    loadArchive(archive, options);
  } catch (error) {
    if (error instanceof PackageError) return error;
    throw new Error(`threw something other than a PackageError: ${String(error)}`, { cause: error });
  }
  throw new Error('the archive was accepted');
}

let scratch: string;
let cwd: string;
let savedTmp: string | undefined;
let passwd: { size: number; mtimeMs: number } | undefined;
beforeAll(async () => {
  // The reader works in memory. To show it writes nothing, the corpus runs with the working
  // directory and TMPDIR pointed at an empty scratch directory, which must stay empty.
  scratch = await mkdtemp(join(tmpdir(), 'ap-hostile-'));
  cwd = process.cwd();
  savedTmp = process.env.TMPDIR;
  process.chdir(scratch);
  process.env.TMPDIR = scratch;
  if (existsSync('/etc/passwd')) passwd = statSync('/etc/passwd');
});
afterAll(async () => {
  process.chdir(cwd);
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  await rm(scratch, { recursive: true, force: true });
});

describe('hostile archives', () => {
  it('is a corpus of distinct archives, each a real problem', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    expect(new Set(corpus.map((c) => c.name)).size).toBe(corpus.length);
    // The builder's valid entries are a loadable package: each case breaks exactly what it names.
    expect(loadArchive(gzTar(...validPackageEntries()), options).manifest.package.name).toBe('claims-intake');
  });

  it.each(corpus.map((c) => [c.name, c] as const))(
    'refuses %s with one clear problem, quickly and in bounded memory',
    (_name, c) => {
      const before = process.memoryUsage();
      const started = performance.now();
      const error = refusal(c.archive);
      const elapsed = performance.now() - started;
      const after = process.memoryUsage();
      expect(error.problems).toEqual([
        expect.objectContaining({ rule: c.rule, message: expect.stringMatching(c.refusal) }),
      ]);
      if (c.rule === 'archive') {
        expect(error.problems[0]?.file).toBe('(archive)');
        expect(error.message).toMatch(/^package archive is not valid\n {2}- /);
      }
      expect(elapsed).toBeLessThan(MAX_MS);
      expect(after.rss - before.rss).toBeLessThan(MAX_GROWTH);
      expect(after.heapUsed - before.heapUsed).toBeLessThan(MAX_GROWTH);
    },
  );

  it('wrote nothing: the scratch working directory is empty and no traversal target exists', async () => {
    for (const c of corpus) refusal(c.archive);
    expect(process.cwd()).toBe(scratch);
    expect(await readdir(scratch)).toEqual([]);
    for (const target of [
      resolve(scratch, '..', escape),
      resolve(scratch, '..', '..', escape),
      join('/tmp', escape),
      join(tmpdir(), escape),
      join(dirname(scratch), escape),
      join('/', escape),
    ])
      expect(existsSync(target), target).toBe(false);
    if (passwd !== undefined) {
      const now = statSync('/etc/passwd');
      expect({ size: now.size, mtimeMs: now.mtimeMs }).toEqual({
        size: passwd.size,
        mtimeMs: passwd.mtimeMs,
      });
    }
  });
});

describe('what the reader accepts around hostile cases', () => {
  const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);

  it('reads a long name from a pax header and from a GNU long-name header (both supported)', () => {
    const long = `payload/${'d'.repeat(120)}/notes.txt`;
    const fromPax = readArchive(
      gzTar(...validPackageEntries(), paxEntry({ path: long, mtime: '1.5' }), rawEntry({ name: 'x' }, 'pax')),
    );
    expect(text(fromPax.get(long))).toBe('pax');
    const fromGnu = readArchive(
      gzTar(...validPackageEntries(), gnuLongName(long), rawEntry({ name: 'x', format: 'gnu' }, 'gnu')),
    );
    expect(text(fromGnu.get(long))).toBe('gnu');
  });

  it('honours a pax size record, and a v7 header without magic', () => {
    const body = 'a body the header size field does not tell';
    const files = readArchive(
      gzTar(
        paxEntry({ size: String(body.length) }),
        rawEntry({ name: 'notes.txt', sizeField: '00000000000\0' }, body),
        rawEntry({ name: 'v7.txt', format: 'v7' }, 'v7'),
      ),
    );
    expect(text(files.get('notes.txt'))).toBe(body);
    expect(text(files.get('v7.txt'))).toBe('v7');
  });

  it('accepts the zero padding tar tools add after the end blocks, and a leading ./ on paths', () => {
    const tar = concat([
      rawEntry({ name: './', type: '5' }),
      rawEntry({ name: './package.toml' }, 'x'),
      END_OF_ARCHIVE,
      new Uint8Array(8192),
    ]);
    expect([...readArchive(gzipSync(tar)).keys()]).toEqual(['package.toml']);
  });

  it('reports the limits it was given', () => {
    const entries = Array.from({ length: 11 }, (_, i) => rawEntry({ name: `f${i}` }, 'x'));
    expect(() => readArchive(gzTar(...entries), MAX_ARCHIVE_CONTENT_BYTES, 10)).toThrow(
      /more than 10 entries/,
    );
    expect(readArchive(gzTar(...entries), MAX_ARCHIVE_CONTENT_BYTES, 11).size).toBe(11);
    expect(() => readArchive(gzTar(rawEntry({ name: 'f' }, 'x'.repeat(101))), 100)).toThrow(
      /content exceeds 100 bytes/,
    );
    expect(readArchive(gzTar(rawEntry({ name: 'f' }, 'x'.repeat(100))), 100).size).toBe(1);
  });
});

/** A seeded PRNG (mulberry32): the same cases on every run and machine. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Offsets of the size field, the type flag and the magic in a header. */
const TOUCHY = [
  ...Array.from({ length: 12 }, (_, i) => 124 + i),
  156,
  ...Array.from({ length: 8 }, (_, i) => 257 + i),
];
/** Bytes a header field could plausibly hold: octal digits, type flags, NUL, space, '/', '.'. */
const PRINTABLE = [...'0123456789125 67xgLKS/.'].map((c) => c.charCodeAt(0)).concat([0]);

/** Rewrites the checksum of the header block at `at`, so a mutation reaches the fields behind it. */
function fixChecksum(tar: Uint8Array, at: number): void {
  tar.fill(0x20, at + 148, at + 156);
  let sum = 0;
  for (let i = at; i < at + 512; i++) sum += tar[i] ?? 0;
  tar.set(new TextEncoder().encode(`${sum.toString(8).padStart(6, '0')}\0 `), at + 148);
}

describe('randomly damaged archives', () => {
  const parts = [
    ...validPackageEntries(),
    paxEntry({ path: 'docs/long-name.txt' }),
    rawEntry({ name: 'x' }, 'y'),
  ];
  const headerOffsets = parts.map((_, i) => parts.slice(0, i).reduce((n, part) => n + part.length, 0));
  const tar = concat([...parts, END_OF_ARCHIVE]);
  const length = (text: string) => new TextEncoder().encode(text).length;
  /** Where the manifest's and the payload's text lie in the tar. */
  const bodies = [
    { at: 512, length: length(FIXTURES.agent.manifest) },
    { at: (headerOffsets[2] ?? 0) + 512, length: length(FIXTURES.agent.payload) },
  ];
  // A copy: Buffer.slice() would give views, and the damage would build up case after case.
  const gz = Uint8Array.from(gzipSync(tar));

  it('only ever returns a package, a report or a PackageError, within bounded time (600 seeded cases)', () => {
    const random = prng(20_240_612);
    const pick = (n: number) => Math.floor(random() * n);
    const outcomes = { loaded: 0, refused: 0 };
    for (let i = 0; i < 600; i++) {
      const kind = i % 6;
      let bytes: Uint8Array;
      if (kind === 0) {
        // Flip bits anywhere in the tar.
        const t = tar.slice();
        for (let n = 1 + pick(4); n > 0; n--) t[pick(t.length)]! ^= 1 << pick(8);
        bytes = gzipSync(t);
      } else if (kind === 1) {
        // Change a header field and fix the checksum, so the parser reads the damaged field.
        const t = tar.slice();
        const at = headerOffsets[pick(headerOffsets.length)] ?? 0;
        for (let n = 1 + pick(3); n > 0; n--) {
          // Half the time a byte of the size, type flag or magic: the fields the parser acts on.
          const field = random() < 0.5 ? (TOUCHY[pick(TOUCHY.length)] ?? 0) : pick(512);
          t[at + field] = random() < 0.5 ? pick(256) : (PRINTABLE[pick(PRINTABLE.length)] ?? 0);
        }
        fixChecksum(t, at);
        bytes = gzipSync(t);
      } else if (kind === 2) {
        // Cut the tar short, or stretch it with random bytes.
        const t = tar.slice(0, pick(tar.length));
        bytes = gzipSync(
          random() < 0.5 ? t : concat([t, Uint8Array.from({ length: pick(2048) }, () => pick(256))]),
        );
      } else if (kind === 3) {
        // Flip bytes of the gzip stream itself.
        const g = gz.slice();
        for (let n = 1 + pick(3); n > 0; n--) g[pick(g.length)] = pick(256);
        bytes = g;
      } else if (kind === 4) {
        // Truncate the gzip stream.
        bytes = gz.slice(0, pick(gz.length));
      } else {
        // Damage the manifest or payload text (inside the bodies), the checksum left valid.
        const t = tar.slice();
        const body = bodies[pick(2)] ?? { at: 0, length: 1 };
        for (let n = 1 + pick(4); n > 0; n--) t[body.at + pick(body.length)] = pick(256);
        bytes = gzipSync(t);
      }
      const started = performance.now();
      try {
        loadArchive(bytes, options);
        outcomes.loaded += 1;
      } catch (error) {
        if (!(error instanceof PackageError))
          throw new Error(`case ${i} (kind ${kind}) threw ${String(error)}`, { cause: error });
        expect(error.problems.length, `case ${i}`).toBeGreaterThan(0);
        outcomes.refused += 1;
      }
      const report = validateArchive(bytes, options);
      expect(report.ok === (report.problems.length === 0), `case ${i}`).toBe(true);
      expect(performance.now() - started, `case ${i}`).toBeLessThan(MAX_MS);
    }
    expect(outcomes.loaded + outcomes.refused).toBe(600);
    // The seed gives a mix: damage the reader shrugs off (a changed mtime) and damage it refuses.
    expect(outcomes.loaded).toBeGreaterThan(20);
    expect(outcomes.refused).toBeGreaterThan(300);
  });
});
