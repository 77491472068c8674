import type { TarEntry } from './tar.ts';

/** What one archive may hold; anything past a limit is refused, not truncated. */
export interface TarLimits {
  /** Most bytes of content: file bodies plus pax and long-name header bodies. */
  maxBytes: number;
  /** Most headers: entries, directories, pax and long-name headers all count. */
  maxEntries: number;
}

/**
 * What the reader throws for a fault of the archive. Anything else it throws is a bug of the
 * reader, and is left to surface as one.
 */
export class TarFormatError extends Error {
  override name = 'TarFormatError';
}

/** Longest entry path, in UTF-8 bytes: far above a package's, short enough for an error message. */
export const MAX_TAR_PATH_BYTES = 1024;

const BLOCK = 512;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const latin1 = new TextDecoder('latin1');
const encoder = new TextEncoder();

/** Type flags refused, by what they are (docs/packages.md "Untrusted archives"). */
const REFUSED_TYPES: Record<string, string> = {
  '1': 'a hard link',
  '2': 'a symbolic link',
  '3': 'a character device',
  '4': 'a block device',
  '6': 'a FIFO',
  '7': 'a contiguous file',
  K: 'a GNU long link name',
  S: 'a GNU sparse file',
  M: 'a GNU multi-volume continuation',
  V: 'a GNU volume header',
  D: 'a GNU directory dump',
  N: 'a GNU old long name',
};

/** Extended-header fields carried to the next entry. */
interface Pending {
  path?: string;
  size?: number;
}

/**
 * The entries of an untrusted tar archive, held in memory (nothing touches the disk). Reads
 * ustar, GNU and pax archives of regular files and directories, with long names from pax `path`
 * records or GNU `L` headers (a pax `size` record is honoured). Throws an Error naming the fault
 * and its byte offset for anything else: a link, device, FIFO or other entry type, a path that is
 * absolute, climbs out with `..`, holds an empty or `.` segment, a backslash, a drive letter or a
 * control character, is not UTF-8 or is longer than MAX_TAR_PATH_BYTES, the same path twice, a
 * header with a bad checksum or a size that is not octal, a truncated header or entry, a missing
 * end-of-archive marker, non-zero bytes after it, more than `maxEntries` headers or more than
 * `maxBytes` of content. Time and memory are linear in the input, bounded by the limits.
 */
export function readTar(tar: Uint8Array, limits: TarLimits): TarEntry[] {
  const entries: TarEntry[] = [];
  const seen = new Set<string>();
  let offset = 0;
  let total = 0;
  let headers = 0;
  let pending: Pending | undefined;
  for (;;) {
    if (offset === tar.length)
      throw new TarFormatError(`tar ends at offset ${offset} without its end-of-archive marker (truncated?)`);
    if (offset + BLOCK > tar.length)
      throw new TarFormatError(
        `truncated tar header at offset ${offset}: ${tar.length - offset} of ${BLOCK} bytes`,
      );
    const block = tar.subarray(offset, offset + BLOCK);
    if (isZero(block)) {
      if (pending !== undefined)
        throw new TarFormatError(`a pax or long-name header has no entry after it (offset ${offset})`);
      if (!isZero(tar.subarray(offset)))
        throw new TarFormatError(
          `data after the end-of-archive marker at offset ${offset + firstNonZero(tar.subarray(offset))}`,
        );
      return entries;
    }
    headers += 1;
    if (headers > limits.maxEntries)
      throw new TarFormatError(`archive holds more than ${limits.maxEntries} entries`);
    checkChecksum(block, offset);
    const type = String.fromCharCode(block[156] ?? 0);
    const isMeta = type === 'x' || type === 'g' || type === 'L';
    const size = (isMeta ? undefined : pending?.size) ?? sizeField(block, offset);
    if (size > limits.maxBytes - total)
      throw new TarFormatError(
        `archive content exceeds ${limits.maxBytes} bytes (the entry at offset ${offset} declares ${size} bytes, after ${total} before it)`,
      );
    const bodyAt = offset + BLOCK;
    if (bodyAt + size > tar.length)
      throw new TarFormatError(
        `truncated tar entry at offset ${offset}: its header declares ${size} bytes, ${tar.length - bodyAt} remain`,
      );
    const body = tar.subarray(bodyAt, bodyAt + size);
    total += size;
    const headerAt = offset;
    offset = bodyAt + size + padding(size);
    if (offset > tar.length)
      throw new TarFormatError(
        `truncated tar entry at offset ${headerAt}: the padding after its ${size} bytes is cut short`,
      );

    if (type === 'x') pending = { ...pending, ...paxRecords(body, headerAt) };
    else if (type === 'g') paxRecords(body, headerAt);
    else if (type === 'L') pending = { ...pending, path: decodePath(nulTerminated(body), headerAt) };
    else if (type === '0' || type === '\0' || type === '5') {
      const raw = pending?.path ?? headerPath(block, headerAt);
      pending = undefined;
      const isDir = type === '5' || (raw.endsWith('/') && size === 0);
      const path = safePath(raw, isDir, headerAt);
      if (path === undefined) continue;
      const id = path.replace(/\/$/, '');
      if (seen.has(id))
        throw new TarFormatError(`duplicate path in archive: ${show(path)} (offset ${headerAt})`);
      seen.add(id);
      entries.push(isDir ? { path: `${id}/`, bytes: new Uint8Array() } : { path, bytes: body.slice() });
    } else {
      const what = REFUSED_TYPES[type] ?? `an unknown kind (type flag ${JSON.stringify(type)})`;
      throw new TarFormatError(
        `unsupported tar entry type '${type}' at offset ${headerAt}: ${what}; only files and directories are allowed`,
      );
    }
  }
}

/** The header's path: `prefix/name` in POSIX ustar, the name alone in GNU and v7 headers. */
function headerPath(block: Uint8Array, offset: number): string {
  const name = decodePath(nulTerminated(block.subarray(0, 100)), offset);
  const posix = latin1.decode(block.subarray(257, 263)) === 'ustar\0';
  const prefix = posix ? decodePath(nulTerminated(block.subarray(345, 500)), offset) : '';
  return prefix === '' ? name : `${prefix}/${name}`;
}

/**
 * The path an entry may be stored under, or undefined for the archive root (`./`). Throws on a
 * path that could name anything outside the archive's root, or that tools would read differently.
 */
function safePath(raw: string, isDir: boolean, offset: number): string | undefined {
  const unsafe = (why: string) =>
    new TarFormatError(`unsafe path in archive: ${show(raw)} (${why}; offset ${offset})`);
  if (encoder.encode(raw).length > MAX_TAR_PATH_BYTES)
    throw unsafe(`longer than ${MAX_TAR_PATH_BYTES} bytes`);
  if ([...raw].some((c) => c < ' ' || c === '\u007f')) throw unsafe('holds a control character');
  if (raw.startsWith('/')) throw unsafe('absolute');
  if (raw.includes('\\')) throw unsafe('holds a backslash');
  const path = raw.replace(/^(\.\/)+/, '');
  if (path === '' || path === '.') {
    if (isDir) return undefined;
    throw unsafe('a file with no name');
  }
  const segments = (isDir ? path.replace(/\/$/, '') : path).split('/');
  if (segments.includes('..')) throw unsafe('climbs out with ".."');
  if (segments.includes('') || segments.includes('.')) throw unsafe('holds an empty or "." segment');
  if (/^[A-Za-z]:/.test(segments[0] ?? '')) throw unsafe('a drive letter');
  return path;
}

/** A pax extended header's `path` and `size`; other keys (times, owners, xattrs) are ignored. */
function paxRecords(body: Uint8Array, offset: number): Pending {
  const out: Pending = {};
  const bad = (why: string) => new TarFormatError(`malformed pax header at offset ${offset}: ${why}`);
  let at = 0;
  while (at < body.length) {
    if (isZero(body.subarray(at))) break;
    const space = body.indexOf(0x20, at);
    const digits = space < 0 ? '' : latin1.decode(body.subarray(at, space));
    if (!/^[1-9][0-9]{0,8}$/.test(digits)) throw bad('a record without its length');
    const length = Number(digits);
    const end = at + length;
    if (end > body.length || body[end - 1] !== 0x0a) throw bad('a record length past its end');
    let record: string;
    try {
      record = utf8.decode(body.subarray(space + 1, end - 1));
    } catch {
      throw bad('a record that is not UTF-8');
    }
    const equals = record.indexOf('=');
    if (equals <= 0) throw bad('a record without key=value');
    const key = record.slice(0, equals);
    const value = record.slice(equals + 1);
    if (key === 'path') out.path = value;
    else if (key === 'size') {
      if (!/^[0-9]{1,15}$/.test(value)) throw bad(`size ${show(value)} is not a decimal number`);
      out.size = Number(value);
    }
    at = end;
  }
  return out;
}

function checkChecksum(block: Uint8Array, offset: number): void {
  const stored = octalField(block.subarray(148, 156), offset, 'checksum');
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const byte = i >= 148 && i < 156 ? 32 : (block[i] ?? 0);
    unsigned += byte;
    signed += byte > 127 ? byte - 256 : byte;
  }
  if (stored !== unsigned && stored !== signed)
    throw new TarFormatError(`bad tar header checksum at offset ${offset}`);
}

function sizeField(block: Uint8Array, offset: number): number {
  if (((block[124] ?? 0) & 0x80) !== 0)
    throw new TarFormatError(
      `tar header at offset ${offset} has a base-256 size (entries over 8 GiB are not accepted)`,
    );
  return octalField(block.subarray(124, 136), offset, 'size');
}

/** An octal header field: optional leading spaces, digits, then NULs or spaces. */
function octalField(field: Uint8Array, offset: number, name: string): number {
  const raw = latin1.decode(field);
  const match = /^ *([0-7]*)[ \0]*$/.exec(raw);
  if (match === null)
    throw new TarFormatError(
      `bad octal number in tar header at offset ${offset}: ${name} field "${printable(field)}"`,
    );
  const digits = match[1] ?? '';
  return digits === '' ? 0 : parseInt(digits, 8);
}

function decodePath(bytes: Uint8Array, offset: number): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new TarFormatError(`a path in the tar header at offset ${offset} is not UTF-8`);
  }
}

function nulTerminated(field: Uint8Array): Uint8Array {
  const end = field.indexOf(0);
  return end < 0 ? field : field.subarray(0, end);
}

function isZero(bytes: Uint8Array): boolean {
  return firstNonZero(bytes) === bytes.length;
}

function firstNonZero(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return i;
  return bytes.length;
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

/** Header bytes for an error message: printable ASCII as is, anything else as `\xNN`. */
function printable(bytes: Uint8Array): string {
  return [...bytes]
    .map((byte) =>
      byte >= 0x20 && byte < 0x7f && byte !== 0x5c && byte !== 0x22
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, '0')}`,
    )
    .join('');
}

/** A path for an error message: quoted, and cut short when long. */
function show(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}...` : text);
}
