import type { SessionTurn } from './session-store.ts';

/** UTF-8 bytes of a string: what limits on messages and sessions count. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The newest turns that fit both limits, oldest first: walking back from the newest turn, each
 * turn is kept while the count stays within `maxTurns` and the UTF-8 bytes of the kept contents
 * within `maxBytes`; the first turn that does not fit ends the window (the context the model gets
 * stays contiguous). A turn larger than `maxBytes` on its own is therefore never kept.
 */
export function newestTurnsWithin(turns: readonly SessionTurn[], maxTurns: number, maxBytes: number): SessionTurn[] {
  return turns.slice(windowStart(turns, maxTurns, maxBytes, (turn) => utf8Bytes(turn.content)));
}

/**
 * Where the window of `newestTurnsWithin` starts in `items`, each of `sizeOf(item)` bytes: the
 * index of the oldest item kept (`items.length` when none is).
 */
export function windowStart<T>(items: readonly T[], maxTurns: number, maxBytes: number, sizeOf: (item: T) => number): number {
  const keep = Math.max(0, Math.floor(maxTurns));
  let bytes = 0;
  let from = items.length;
  while (from > 0 && items.length - from < keep) {
    const size = sizeOf(items[from - 1]!);
    if (bytes + size > maxBytes) break;
    bytes += size;
    from -= 1;
  }
  return from;
}
