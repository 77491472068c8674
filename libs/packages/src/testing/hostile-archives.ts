import { gzipSync } from 'node:zlib';
import { FIXTURES } from './package-fixtures.ts';

/**
 * Hostile package archives, every byte written here by hand (no tar library, not this package's
 * own writer), for the tests of the archive reader and of anything that accepts uploads (the
 * registry's publish route). docs/packages.md "Untrusted archives" lists what each one probes.
 */

const BLOCK = 512;
const encoder = new TextEncoder();

/** Every field of a tar header; each defaults to what a valid regular-file header holds. */
export interface RawHeader {
  /** Bytes 0-99. */
  name?: string | Uint8Array;
  mode?: string;
  /** Written as 11 octal digits and a NUL unless `sizeField` gives the 12 raw bytes. */
  size?: number;
  sizeField?: string | Uint8Array;
  /** Type flag, byte 156: '0' file, '5' directory, '1' hard link, '2' symlink, 'x' pax, 'L' GNU long name... */
  type?: string;
  linkname?: string;
  /** `posix` ("ustar\0" "00", with a prefix field), `gnu` ("ustar  \0") or `v7` (no magic). */
  format?: 'posix' | 'gnu' | 'v7';
  /** Bytes 345-499 of a posix header. */
  prefix?: string | Uint8Array;
  /** Adds this to the correct checksum (a corrupt header). */
  checksumError?: number;
}

/** One 512-byte header block. */
export function rawHeader(h: RawHeader = {}): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const put = (at: number, length: number, value: string | Uint8Array) => {
    const bytes = typeof value === 'string' ? encoder.encode(value) : value;
    if (bytes.length > length) throw new Error(`field at ${at} holds ${length} bytes, not ${bytes.length}`);
    block.set(bytes, at);
  };
  const size = h.size ?? 0;
  put(0, 100, h.name ?? 'package.toml');
  put(100, 8, h.mode ?? '0000644\0');
  put(108, 8, '0000000\0');
  put(116, 8, '0000000\0');
  put(124, 12, h.sizeField ?? `${size.toString(8).padStart(11, '0')}\0`);
  put(136, 12, '00000000000\0');
  put(156, 1, h.type ?? '0');
  put(157, 100, h.linkname ?? '');
  const format = h.format ?? 'posix';
  if (format === 'posix') put(257, 8, 'ustar\u000000');
  if (format === 'gnu') put(257, 8, 'ustar  \0');
  if (format === 'posix') put(345, 155, h.prefix ?? '');
  block.fill(0x20, 148, 156);
  const sum = block.reduce((total, byte) => total + byte, 0) + (h.checksumError ?? 0);
  put(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/** A header and its body, padded to whole blocks; `size` defaults to the body's length. */
export function rawEntry(h: RawHeader, body: string | Uint8Array = new Uint8Array()): Uint8Array {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const header = rawHeader({ size: bytes.length, ...h });
  return concat([header, bytes, new Uint8Array((BLOCK - (bytes.length % BLOCK)) % BLOCK)]);
}

/** A pax extended header (type `x`) holding `records`, each `<length> key=value\n`. */
export function paxEntry(records: Record<string, string>): Uint8Array {
  const body = Object.entries(records)
    .map(([key, value]) => {
      const rest = ` ${key}=${value}\n`;
      let length = Buffer.byteLength(rest) + 1;
      while (String(length).length + Buffer.byteLength(rest) !== length) length += 1;
      return `${length}${rest}`;
    })
    .join('');
  return rawEntry({ name: 'PaxHeaders/x', type: 'x' }, body);
}

/** A GNU long-name header (type `L`, name `././@LongLink`) naming the next entry. */
export function gnuLongName(path: string): Uint8Array {
  return rawEntry({ name: '././@LongLink', type: 'L', format: 'gnu' }, `${path}\0`);
}

/** The two zero blocks that end an archive. */
export const END_OF_ARCHIVE = new Uint8Array(2 * BLOCK);

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Entries, the end-of-archive marker, gzipped. */
export function gzTar(...parts: Uint8Array[]): Uint8Array {
  return gzipSync(concat([...parts, END_OF_ARCHIVE]));
}

/** The files of a valid agent-template package as tar entries (package.toml, payload/, payload/AGENT.md). */
export function validPackageEntries(): Uint8Array[] {
  return [
    rawEntry({ name: 'package.toml' }, FIXTURES.agent.manifest),
    rawEntry({ name: 'payload/', type: '5', mode: '0000755\0' }),
    rawEntry({ name: 'payload/AGENT.md' }, FIXTURES.agent.payload),
  ];
}

/**
 * A gzip stream of `total` zero bytes after `head`, made of concatenated gzip members of 1 MiB
 * of zeros each (one ~1 KiB member reused), so the bomb is small to build and to hold.
 */
export function gzipBomb(head: Uint8Array, total: number): Uint8Array {
  const member = gzipSync(new Uint8Array(1 << 20), { level: 9 });
  const count = Math.ceil(total / (1 << 20));
  return concat([gzipSync(head), ...Array.from({ length: count }, () => member)]);
}

export interface HostileArchive {
  name: string;
  archive: Uint8Array;
  /** What the refusal's message must say. */
  refusal: RegExp;
  /** The rule of the one problem reported: `archive`, except for a package-level fault. */
  rule: string;
}

/**
 * The corpus. `escape` is a file name unique to the run: traversal entries aim at
 * `../<escape>`, `/tmp/<escape>` and the like, so a test can check afterwards that no such file
 * appeared.
 */
export function hostileArchives(escape: string): HostileArchive[] {
  const [manifest, payloadDir, payload] = validPackageEntries() as [Uint8Array, Uint8Array, Uint8Array];
  const valid = [manifest, payloadDir, payload];
  const a = (name: string, archive: Uint8Array, refusal: RegExp, rule = 'archive'): HostileArchive => ({
    name,
    archive,
    refusal,
    rule,
  });
  const file = (name: string | Uint8Array, body = 'x', extra: RawHeader = {}) =>
    rawEntry({ name, ...extra }, body);
  const plainTar = concat([...valid, END_OF_ARCHIVE]);
  const many = Array.from({ length: 5000 }, (_, i) => file(`payload/f${i}.txt`, ''));
  const truncatedHeader = concat([
    manifest,
    rawHeader({ name: 'payload/AGENT.md', size: 10 }).subarray(0, 300),
  ]);
  const shortBody = concat([
    manifest,
    rawHeader({ name: 'payload/AGENT.md', size: 4096 }),
    new Uint8Array(100).fill(65),
  ]);
  // Billion laughs: nine levels of nine aliases, 9^9 strings once expanded, in under 1 KiB.
  const laughs = Array.from({ length: 9 }, (_, i) =>
    i === 0 ? 'l0: &l0 "lol"' : `l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]`,
  );
  const aliasBomb = `---\ndescription: An agent.\n${laughs.join('\n')}\n---\nYou are an agent.\n`;
  return [
    a('a ../ traversal', gzTar(...valid, file(`../${escape}`)), /unsafe path.*climbs out/),
    a(
      'a traversal inside the tree',
      gzTar(...valid, file(`payload/../../${escape}`)),
      /unsafe path.*climbs out/,
    ),
    a(
      'a traversal in a directory entry',
      gzTar(...valid, rawEntry({ name: `../${escape}/`, type: '5' })),
      /climbs out/,
    ),
    a(
      'a traversal through the ustar prefix field',
      gzTar(...valid, file(escape, 'x', { prefix: '../..' })),
      /climbs out/,
    ),
    a(
      'an absolute path',
      gzTar(...valid, file('/etc/passwd', 'root::0:0::/:/bin/sh\n')),
      /unsafe path.*absolute/,
    ),
    a(
      'an absolute path in a pax header',
      gzTar(...valid, paxEntry({ path: `/tmp/${escape}` }), file('innocent')),
      /absolute/,
    ),
    a(
      'a traversal in a GNU long name',
      gzTar(...valid, gnuLongName(`../../${escape}`), file('innocent')),
      /climbs out/,
    ),
    a('a backslash path', gzTar(...valid, file(`payload\\..\\..\\${escape}`)), /backslash/),
    a('a drive letter', gzTar(...valid, file(`C:/${escape}`)), /drive letter/),
    a('a control character', gzTar(...valid, file('payload/\u001b[2Jx')), /control character/),
    a(
      'a symbolic link',
      gzTar(rawEntry({ name: 'package.toml', type: '2', linkname: '/etc/passwd' })),
      /symbolic link/,
    ),
    a(
      'a hard link',
      gzTar(...valid, rawEntry({ name: 'payload/x', type: '1', linkname: '/etc/passwd' })),
      /hard link/,
    ),
    a(
      'a character device',
      gzTar(...valid, rawEntry({ name: 'payload/tty', type: '3' })),
      /character device/,
    ),
    a('a block device', gzTar(...valid, rawEntry({ name: 'payload/sda', type: '4' })), /block device/),
    a('a FIFO', gzTar(...valid, rawEntry({ name: 'payload/fifo', type: '6' })), /FIFO/),
    a(
      'a GNU sparse file',
      gzTar(...valid, rawEntry({ name: 'payload/s', type: 'S', format: 'gnu' })),
      /sparse/,
    ),
    a('an unknown entry type', gzTar(...valid, rawEntry({ name: 'payload/z', type: 'Z' })), /unknown kind/),
    a(
      'a bad header checksum',
      gzTar(rawEntry({ name: 'package.toml', checksumError: 1 }, 'x')),
      /bad tar header checksum/,
    ),
    a('a truncated header', gzipSync(truncatedHeader), /truncated tar header at offset 1024/),
    a(
      'a size larger than the data',
      gzipSync(shortBody),
      /truncated tar entry.*declares 4096 bytes, 100 remain/,
    ),
    a(
      'a non-octal size',
      gzTar(rawEntry({ name: 'package.toml', sizeField: '0000000001x\0' })),
      /bad octal number.*size/,
    ),
    a(
      'a base-256 size',
      gzTar(rawEntry({ name: 'package.toml', sizeField: new Uint8Array(12).fill(0xff) })),
      /base-256/,
    ),
    a(
      'a huge declared size',
      gzTar(rawEntry({ name: 'package.toml', sizeField: '77777777777\0' })),
      /content exceeds/,
    ),
    a(
      'a huge size in a pax header',
      gzTar(paxEntry({ size: '999999999999' }), file('package.toml')),
      /content exceeds/,
    ),
    a(
      'a gzip bomb (one entry declaring 96 MiB of zeros)',
      gzipBomb(rawHeader({ name: 'payload/AGENT.md', size: 96 << 20 }), 96 << 20),
      /content exceeds .* \(the gzip stream unpacks to more than/,
    ),
    a(
      'a gzip bomb of bare zeros',
      gzipBomb(new Uint8Array(), 256 << 20),
      /the gzip stream unpacks to more than/,
    ),
    a('5,000 entries', gzTar(...valid, ...many), /more than 1000 entries/),
    a(
      'a second payload file',
      gzTar(...valid, file('payload/COMPETENCY.md', FIXTURES.competency.payload)),
      /must hold only AGENT\.md/,
      'payload-extra',
    ),
    a('the payload file twice', gzTar(...valid, payload), /duplicate path.*payload\/AGENT\.md/),
    a(
      'a YAML alias bomb in the payload frontmatter',
      gzTar(manifest, payloadDir, file('payload/AGENT.md', aliasBomb)),
      /aliases expand to more than 100 values/,
      'yaml-syntax',
    ),
    a(
      'package.toml twice, the second under ./',
      gzTar(...valid, file('./package.toml', 'x')),
      /duplicate path/,
    ),
    a(
      'a malformed pax record',
      gzTar(rawEntry({ name: 'p', type: 'x' }, '99 path=x\n'), file('x')),
      /malformed pax/,
    ),
    a(
      'a pax header with no entry after it',
      gzTar(...valid, paxEntry({ path: 'payload/late' })),
      /no entry after it/,
    ),
    a('a non-UTF-8 name', gzTar(...valid, file(new Uint8Array([0x70, 0x2f, 0xff, 0xfe]))), /not UTF-8/),
    a(
      'trailing garbage after the end blocks',
      gzipSync(concat([plainTar, encoder.encode('#!/bin/sh\nrm -rf /\n')])),
      /after the end-of-archive marker/,
    ),
    a(
      'a second tar after the first',
      gzipSync(concat([plainTar, plainTar])),
      /after the end-of-archive marker/,
    ),
    a('no end-of-archive marker', gzipSync(concat(valid)), /without its end-of-archive marker/),
    a(
      'garbage after the gzip stream',
      concat([gzTar(...valid), encoder.encode('GARBAGE')]),
      /gzip stream is corrupt or has bytes after its end/,
    ),
    a('a truncated gzip stream', gzTar(...valid).subarray(0, 200), /gzip stream is truncated/),
    a('a plain (not gzipped) tar', plainTar, /a plain tar, not gzip-compressed/),
    a('an empty upload', new Uint8Array(), /not gzip data/),
    a('a zip file', concat([encoder.encode('PK\u0003\u0004'), new Uint8Array(100)]), /not gzip data/),
  ];
}
