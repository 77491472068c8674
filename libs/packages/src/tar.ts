/**
 * A minimal ustar writer: regular files and directories only, which is all a package archive
 * holds (D4). Written archives are reproducible: fixed mode, owner and mtime 0, entries in the
 * order given. The reader of untrusted archives is read-tar.ts.
 */

export interface TarEntry {
  /** POSIX path; a trailing `/` marks a directory. */
  path: string;
  bytes: Uint8Array;
}

const BLOCK = 512;
const encoder = new TextEncoder();

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
