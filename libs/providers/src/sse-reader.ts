/**
 * The `data` payloads of a server-sent-event stream, one per event (multi-line data joined with
 * "\n"), in order. Comments and other fields are skipped. Lines end with LF or CRLF (a bare CR,
 * legal but unused by OpenAI-protocol servers, is not a line end here). Text is decoded across
 * reads, so a UTF-8 character split between two chunks stays whole.
 */
export async function* sseData(body: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let data: string[] = [];

  const take = (line: string): string | undefined => {
    if (line === '') {
      const event = data.length > 0 ? data.join('\n') : undefined;
      data = [];
      return event;
    }
    const colon = line.indexOf(':');
    if (colon === 0 || (colon < 0 ? line : line.slice(0, colon)) !== 'data') return undefined;
    const value = colon < 0 ? '' : line.slice(colon + 1);
    data.push(value.startsWith(' ') ? value.slice(1) : value);
    return undefined;
  };

  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true });
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const event = take(pending.slice(0, nl).replace(/\r$/, ''));
      pending = pending.slice(nl + 1);
      if (event !== undefined) yield event;
    }
  }
  pending += decoder.decode();
  const last = take(pending.replace(/\r$/, '')) ?? take('');
  if (last !== undefined) yield last;
}
