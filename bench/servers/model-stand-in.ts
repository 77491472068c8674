import { parseArgs } from 'node:util';
import { startFakeOpenAiServer, type FakeReply, type RecordedRequest } from '@agent-platform/testkit';
import { toolModelReply, type ChatMessage } from '../tool-model.ts';

// The model stand-in of the one-vs-two-workers targets (issue 4): an OpenAI-compatible server
// that WAITS `--delay-ms` before each answer (a remote model taking its time, not one burning
// the worker's CPU), then echoes the last user message. Its own process, so that its work is
// not charged to the bench process driving the load. A message written by `callToolMessage`
// (bench/tool-model.ts) is answered with that one tool call first, then with its result (the
// tool-call journal targets).
const { values } = parseArgs({ options: { 'delay-ms': { type: 'string', default: '20' } } });
const delayMs = Number(values['delay-ms']);
if (!Number.isInteger(delayMs) || delayMs < 0) throw new Error(`--delay-ms must be an integer >= 0, got ${values['delay-ms']}`);

function reply(request: RecordedRequest): FakeReply {
  const messages = (request.body?.messages ?? []) as ChatMessage[];
  const asked = toolModelReply(messages);
  if (asked !== null) return { ...asked, delay_ms: delayMs };
  return { text: messages.filter((m) => m.role === 'user').at(-1)?.content ?? '', delay_ms: delayMs };
}

const server = await startFakeOpenAiServer({ fallback: reply });
// Every request is recorded by the fake server (for tests); a bench run would grow that list
// without bound, so it is emptied as it goes.
setInterval(() => server.requests.splice(0), 1_000).unref();
console.log(`model stand-in (${delayMs} ms) listening on ${server.url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().then(() => process.exit(0)));
}
