/**
 * A minimal ustar writer and reader: regular files and directories only, which is all a
 * package archive holds (D4). Written archives are reproducible: fixed mode, owner and mtime 0,
 * entries in the order given. The reader also accepts what common `tar` tools add around such
 * entries (pax and GNU long-name headers) and refuses links, devices and unsafe paths.
 */

export interface TarEntry {
  /** POSIX path; a trailing `/` marks a directory. */
  path: string;
  bytes: Uint8Array;
}

const BLOCK = 512;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function writeTar(entries: readonly TarEntry[]): Uint8Array {
  const blocks: Uint8Array[] = [];
  for (const entry of entries) {
    const isDir = entry.path.endsWith('/');
    blocks.push(header(entry.path, isDir ? 0 : entry.bytes.length, isDir));
    if (!isDir) blocks.push(entry.bytes, new Uint8Array(padding(entry.bytes.length)));
  }
  blocks.push(new Uint8Array(BLOCK * 2));
  return concat(blocks);
}

function header(path: string, size: number, isDir: boolean): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const [prefix, name] = splitName(path);
  put(block, 0, 100, name);
  put(block, 100, 8, isDir ? '0000755\0' : '0000644\0');
  put(block, 108, 8, '0000000\0');
  put(block, 116, 8, '0000000\0');
  put(block, 124, 12, `${size.toString(8).padStart(11, '0')}\0`);
  put(block, 136, 12, '00000000000\0');
  put(block, 148, 8, '        ');
  put(block, 156, 1, isDir ? '5' : '0');
  put(block, 257, 8, 'ustar\u000000');
  put(block, 345, 155, prefix);
  const sum = block.reduce((total, byte) => total + byte, 0);
  put(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/** ustar keeps up to 100 bytes of name and 155 of prefix, split at a `/`. */
function splitName(path: string): [string, string] {
  if (encoder.encode(path).length <= 100) return ['', path];
  for (let i = path.lastIndexOf('/', path.length - 2); i > 0; i = path.lastIndexOf('/', i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (encoder.encode(prefix).length <= 155 && encoder.encode(name).length <= 100) return [prefix, name];
  }
  throw new Error(`path too long for a tar header: ${path}`);
}

/**
 * The entries of a tar archive. Throws on a corrupt header, an entry other than a file or a
 * directory, a path that is absolute or climbs out with `..`, or more than `maxBytes` of content.
 */
export function readTar(tar: Uint8Array, maxBytes: number): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let total = 0;
  let nextPath: string | undefined;
  while (offset + BLOCK <= tar.length) {
    const block = tar.subarray(offset, offset + BLOCK);
    if (block.every((byte) => byte === 0)) break;
    checkChecksum(block, offset);
    const size = octal(block.subarray(124, 136), offset);
    const type = String.fromCharCode(block[156] ?? 0);
    const body = tar.subarray(offset + BLOCK, offset + BLOCK + size);
    if (body.length !== size) throw new Error(`truncated tar entry at offset ${offset}`);
    offset += BLOCK + size + padding(size);
    total += size;
    if (total > maxBytes) throw new Error(`archive content exceeds ${maxBytes} bytes`);
    if (type === 'x') nextPath = paxPath(body) ?? nextPath;
    else if (type === 'L') nextPath = text(body);
    else if (type === 'g') continue;
    else if (type === '0' || type === '\0' || type === '5') {
      const path = safePath(nextPath ?? headerPath(block));
      nextPath = undefined;
      if (path === undefined) continue;
      entries.push(
        type === '5'
          ? { path: path.endsWith('/') ? path : `${path}/`, bytes: new Uint8Array() }
          : { path, bytes: body.slice() },
      );
    } else {
      throw new Error(
        `unsupported tar entry type '${type}' at offset ${offset}: only files and directories are allowed`,
      );
    }
  }
  return entries;
}

function headerPath(block: Uint8Array): string {
  const name = text(block.subarray(0, 100));
  const isUstar = text(block.subarray(257, 262)) === 'ustar';
  const prefix = isUstar ? text(block.subarray(345, 500)) : '';
  return prefix === '' ? name : `${prefix}/${name}`;
}

/** Undefined for the archive root itself (`./`); throws on a path that could escape the target. */
function safePath(raw: string): string | undefined {
  const path = raw.replace(/^(\.\/)+/, '');
  if (path === '' || path === '.') return undefined;
  if (path.startsWith('/') || path.includes('\\') || path.split('/').some((segment) => segment === '..')) {
    throw new Error(`unsafe path in archive: ${JSON.stringify(raw)}`);
  }
  return path;
}

function paxPath(body: Uint8Array): string | undefined {
  for (const record of text(body).split('\n')) {
    const match = /^\d+ path=(.*)$/.exec(record);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

function checkChecksum(block: Uint8Array, offset: number): void {
  const stored = octal(block.subarray(148, 156), offset);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (block[i] ?? 0);
  if (sum !== stored) throw new Error(`bad tar header checksum at offset ${offset}`);
}

function octal(field: Uint8Array, offset: number): number {
  const digits = text(field).trim();
  if (!/^[0-7]*$/.test(digits)) throw new Error(`bad octal number in tar header at offset ${offset}`);
  return digits === '' ? 0 : parseInt(digits, 8);
}

/** A NUL-terminated header field. */
function text(field: Uint8Array): string {
  const end = field.indexOf(0);
  return decoder.decode(end < 0 ? field : field.subarray(0, end));
}

function put(block: Uint8Array, at: number, length: number, value: string): void {
  const bytes = encoder.encode(value);
  if (bytes.length > length) throw new Error(`tar header field too long: ${value}`);
  block.set(bytes, at);
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
