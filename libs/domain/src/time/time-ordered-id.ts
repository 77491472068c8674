import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(16 * 256);
let next = pool.length;

/**
 * A UUID of version 7 (RFC 9562): the first 48 bits are `atMs` (Unix ms), the rest random. Ids
 * made one after another sort by time, so a table or index keyed by them grows at its end: each
 * insert lands on the same leaf page as the one before instead of a random one, which is what a
 * commit pays for (docs/performance.md "Where a send's commit time goes"). Used for ids that are
 * inserted on every request (the privacy gateway's traffic decisions).
 */
export function timeOrderedUuid(atMs: number): string {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const bytes = pool.subarray(next, next + 16);
  next += 16;
  bytes.writeUIntBE(Math.max(0, Math.floor(atMs)) % 2 ** 48, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
