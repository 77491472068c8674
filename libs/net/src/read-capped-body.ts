/**
 * The body of a fetch `Response`, or null once it is over `maxBytes`: refused on a declared
 * `content-length` before a byte is read, otherwise counted as it streams and cancelled at the
 * cap, so an oversized answer is never held whole. An abort of the request (its timeout) while
 * reading rejects as fetch does.
 */
export async function readCappedBody(response: Response, maxBytes: number): Promise<Uint8Array | null> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return null;
  }
  if (response.body === null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
