/**
 * The exclusive upper bound of the keys that start with `prefix`, for a range query
 * `key >= prefix AND key < bound` that an index serves (`substr`, `LIKE` without care, or an
 * unanchored regex would scan). Keys compare in code point order in both adapters: SQLite's
 * BINARY collation compares UTF-8 bytes and so does MongoDB's default one, and UTF-8 byte order is
 * code point order (JS string comparison, UTF-16 units, is not, so it must not be used here).
 *
 * The bound is the prefix with its last code point incremented, after dropping trailing
 * U+10FFFF (which cannot be incremented); null when nothing is left: no upper bound.
 */
export function prefixUpperBound(prefix: string): string | null {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) {
      // Surrogate code points are not characters: the next one after U+D7FF is U+E000.
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return String.fromCodePoint(...points, next);
    }
  }
  return null;
}
