/**
 * The token count of DECISIONS D6's `local` model: `ceil(len(text) / 4)`, where `len` counts
 * Unicode code points (so an emoji is one character, as in Python's `len`, not two UTF-16 units).
 * Also the fallback estimate when an upstream provider reports no usage.
 */
export function estimateTokens(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return Math.ceil(length / 4);
}
