import { describe, expect, it } from 'vitest';
import { sseData } from './sse-reader.ts';

async function events(...chunks: Array<string | Buffer>): Promise<string[]> {
  const source = (async function* () {
    for (const c of chunks) yield Buffer.isBuffer(c) ? c : Buffer.from(c);
  })();
  const out: string[] = [];
  for await (const data of sseData(source)) out.push(data);
  return out;
}

describe('sseData', () => {
  it('yields one payload per event across arbitrary chunk splits, LF or CRLF', async () => {
    expect(await events('data: {"a":1}\n\nda', 'ta: {"b"', ':2}\r\n\r\n: keep-alive\n\nevent: x\ndata: [DONE]\n\n')).toEqual(['{"a":1}', '{"b":2}', '[DONE]']);
  });

  it('joins multi-line data and flushes an event left open at the end', async () => {
    expect(await events('data: one\ndata: two\n\ndata:three')).toEqual(['one\ntwo', 'three']);
  });

  it('keeps a UTF-8 character split between two reads whole', async () => {
    const bytes = Buffer.from('data: héllo\n\n');
    const cut = bytes.indexOf(0xa9); // second byte of "é"
    expect(await events(bytes.subarray(0, cut), bytes.subarray(cut))).toEqual(['héllo']);
  });
});
