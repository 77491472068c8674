import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

/**
 * A streaming gzipped ustar archive of regular files, for backups: members stream from disk to
 * disk, so an archive is never held in memory. Written archives open with any `tar` (`tar tzf`);
 * the reader accepts only what the writer makes (regular files, ustar, short names) and is strict
 * about everything else, since an archive may come from anywhere.
 */

export type TarMember = { name: string; bytes: Buffer } | { name: string; file: string; size: number };

const BLOCK = 512;
/** ustar's size field holds 11 octal digits: members up to 8 GiB. */
const MAX_MEMBER_BYTES = 8 * 1024 ** 3 - 1;

function header(name: string, size: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  if (Buffer.byteLength(name) > 100) throw new Error(`tar member name too long: ${name}`);
  if (size > MAX_MEMBER_BYTES) throw new Error(`tar member ${name} is over 8 GiB`);
  block.write(name, 0, 100, 'utf8');
  block.write('0000600\0', 100);
  block.write('0000000\0', 108);
  block.write('0000000\0', 116);
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  block.write('00000000000\0', 136);
  block.write('        ', 148);
  block.write('0', 156);
  block.write('ustar\u000000', 257);
  const sum = block.reduce((total, byte) => total + byte, 0);
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return block;
}

async function* tarBlocks(members: readonly TarMember[]): AsyncGenerator<Buffer> {
  for (const member of members) {
    const size = 'bytes' in member ? member.bytes.length : member.size;
    yield header(member.name, size);
    if ('bytes' in member) yield member.bytes;
    else {
      let streamed = 0;
      for await (const chunk of createReadStream(member.file)) {
        streamed += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
      if (streamed !== size)
        throw new Error(`${member.file} changed size while it was archived (${size} -> ${streamed} bytes)`);
    }
    const padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (padding > 0) yield Buffer.alloc(padding);
  }
  yield Buffer.alloc(BLOCK * 2);
}

/** Counts and hashes what passes through. */
class Digest extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

/** Writes the members as a gzipped tar to the new file `path`, synced to disk; returns its sha256 and size. */
export async function writeTarGz(
  path: string,
  members: readonly TarMember[],
): Promise<{ checksum: string; size: number }> {
  const digest = new Digest();
  // `flush`: the file is fsynced before the stream closes, so a rename after it publishes whole bytes.
  await pipeline(
    Readable.from(tarBlocks(members)),
    createGzip(),
    digest,
    createWriteStream(path, { flags: 'wx', mode: 0o600, flush: true }),
  );
  return { checksum: `sha256:${digest.hash.digest('hex')}`, size: digest.bytes };
}

/** What the reader hands each member to. */
export interface TarVisitor {
  /** A member starts; throw to refuse it (an unexpected name, too large). */
  begin(name: string, size: number): Promise<void> | void;
  data(chunk: Buffer): Promise<void> | void;
  /** The member's last byte was passed; return false to stop reading the archive here. */
  end(): Promise<boolean | void> | boolean | void;
}

/** Thrown for anything wrong with the archive itself (not gzip, not a tar, truncated, odd entries). */
export class TarFormatError extends Error {
  override name = 'TarFormatError';
}

function octal(field: Buffer, what: string): number {
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .trim();
  if (!/^[0-7]+$/.test(text)) throw new TarFormatError(`tar header has a bad ${what} field`);
  return parseInt(text, 8);
}

function parseHeader(block: Buffer): { name: string; size: number } {
  const stored = octal(block.subarray(148, 156), 'checksum');
  const sum = block.reduce((total, byte, i) => total + (i >= 148 && i < 156 ? 32 : byte), 0);
  if (sum !== stored) throw new TarFormatError('tar header checksum mismatch');
  const type = String.fromCharCode(block[156] ?? 0);
  if (type !== '0' && type !== '\0')
    throw new TarFormatError(`tar entry of type '${type}': a backup holds regular files only`);
  const prefix = block.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
  const base = block.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
  return { name: prefix === '' ? base : `${prefix}/${base}`, size: octal(block.subarray(124, 136), 'size') };
}

/**
 * Reads a gzipped tar from `source`, member by member. Throws `TarFormatError` for a damaged or
 * truncated archive (gzip's own check included), and whatever the visitor throws.
 */
export async function readTarGz(source: Readable, visitor: TarVisitor): Promise<void> {
  let pending = Buffer.alloc(0);
  let remaining = 0;
  let padding = 0;
  let inMember = false;
  let zeroBlocks = 0;
  let stopped = false;
  const gunzip = createGunzip();
  source.pipe(gunzip);
  try {
    for await (const raw of gunzip) {
      let chunk = raw as Buffer;
      while (chunk.length > 0 && !stopped) {
        if (inMember) {
          const take = Math.min(remaining, chunk.length);
          if (take > 0) await visitor.data(chunk.subarray(0, take));
          chunk = chunk.subarray(take);
          remaining -= take;
          if (remaining === 0) {
            inMember = false;
            if ((await visitor.end()) === false) stopped = true;
          }
          continue;
        }
        if (padding > 0) {
          const skip = Math.min(padding, chunk.length);
          chunk = chunk.subarray(skip);
          padding -= skip;
          continue;
        }
        const need = BLOCK - pending.length;
        pending = Buffer.concat([pending, chunk.subarray(0, need)]);
        chunk = chunk.subarray(need);
        if (pending.length < BLOCK) continue;
        const block = pending;
        pending = Buffer.alloc(0);
        if (block.every((b) => b === 0)) {
          zeroBlocks += 1;
          continue;
        }
        if (zeroBlocks > 0) throw new TarFormatError('data after the end of the tar archive');
        const { name, size } = parseHeader(block);
        await visitor.begin(name, size);
        remaining = size;
        padding = (BLOCK - (size % BLOCK)) % BLOCK;
        inMember = true;
        if (size === 0) {
          inMember = false;
          if ((await visitor.end()) === false) stopped = true;
        }
      }
      if (stopped) break;
    }
  } catch (error) {
    if (error instanceof TarFormatError || !isZlibError(error)) throw error;
    throw new TarFormatError(`not a complete gzip stream (${(error as Error).message})`);
  } finally {
    source.unpipe(gunzip);
    source.destroy();
    gunzip.destroy();
  }
  if (stopped) return;
  if (inMember || padding > 0 || pending.length > 0) throw new TarFormatError('the tar archive is truncated');
  if (zeroBlocks < 2) throw new TarFormatError('the tar archive has no end marker (truncated?)');
}

function isZlibError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}
