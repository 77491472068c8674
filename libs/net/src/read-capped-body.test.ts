import { describe, expect, it } from 'vitest';
import { readCappedBody } from './read-capped-body.ts';

/** A streamed body of `chunks` bytes each (no content-length), recording how much was pulled. */
function streamed(chunks: number[]) {
  const pulled = { chunks: 0, cancelled: false };
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = chunks[at++];
      if (size === undefined) return controller.close();
      pulled.chunks++;
      controller.enqueue(new Uint8Array(size).fill(at));
    },
    cancel() {
      pulled.cancelled = true;
    },
  });
  return { response: new Response(body), pulled };
}

describe('readCappedBody', () => {
  it('returns the whole body up to the cap, the cap itself included', async () => {
    const { response } = streamed([4, 4, 2]);
    const bytes = await readCappedBody(response, 10);
    expect(Array.from(bytes ?? [])).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3]);
    expect(await readCappedBody(new Response(null), 10)).toEqual(new Uint8Array());
  });

  it('refuses a declared length over the cap before reading a byte', async () => {
    const { response: inner, pulled } = streamed([4, 4, 4]);
    const response = new Response(inner.body, { headers: { 'content-length': '12' } });
    expect(await readCappedBody(response, 10)).toBeNull();
    expect(pulled).toEqual({ chunks: 0, cancelled: true });
  });

  it('stops a streamed body at the cap and cancels the rest', async () => {
    const { response, pulled } = streamed([4, 4, 4, 4, 4, 4]);
    expect(await readCappedBody(response, 10)).toBeNull();
    expect(pulled.chunks).toBeLessThan(6);
    expect(pulled.cancelled).toBe(true);
  });
});
