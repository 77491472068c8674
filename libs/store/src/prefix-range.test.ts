import { describe, expect, it } from 'vitest';
import { prefixUpperBound } from './prefix-range.ts';

/** Code point order, as SQLite (UTF-8 bytes) and MongoDB compare. */
function before(a: string, b: string): boolean {
  return Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;
}

describe('prefixUpperBound', () => {
  it('increments the last code point', () => {
    expect(prefixUpperBound('ratelimit:')).toBe('ratelimit;');
    expect(prefixUpperBound('é')).toBe('ê');
    expect(prefixUpperBound('\uFFFF')).toBe('\u{10000}');
    expect(prefixUpperBound('\u{D7FF}')).toBe('\u{E000}');
    expect(prefixUpperBound('a\u{10FFFF}')).toBe('b');
    expect(prefixUpperBound('\u{10FFFF}')).toBeNull();
    expect(prefixUpperBound('')).toBeNull();
  });

  it('bounds exactly the keys that start with the prefix, in code point order', () => {
    const keys = ['a', 'a\u{10FFFF}', 'a\uFFFF', 'a\u{1D11E}', 'ab', 'b', '\uFFFF', '\u{1D11E}', 'é', 'f'];
    for (const prefix of ['a', 'a\uFFFF', '\uFFFF', 'é', 'a\u{10FFFF}']) {
      const bound = prefixUpperBound(prefix);
      const inRange = keys.filter((k) => !before(k, prefix) && (bound === null || before(k, bound)));
      expect([prefix, inRange.sort()]).toEqual([prefix, keys.filter((k) => k.startsWith(prefix)).sort()]);
    }
  });
});
