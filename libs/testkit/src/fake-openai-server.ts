import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * Common to every reply: wait `delay_ms`, and for `hold` to settle, before sending the response
 * headers (a slow upstream; `hold` lets a test decide when).
 */
interface Timing {
  delay_ms?: number;
  hold?: Promise<unknown>;
}

/** A text answer; streamed as SSE when the request says `stream: true`, else one JSON body. */
export interface FakeTextReply extends Timing {
  text: string;
  usage?: FakeUsage;
  finish_reason?: string;
  /** How the streamed text is cut into chunks; default: word by word. */
  chunks?: string[];
  /** Streaming: stall this long after the first content chunk (a reply that stops mid-way). */
  pause_ms?: number;
}

/** The model asks for tools; `arguments` objects are sent as JSON text, strings as they are. */
export interface FakeToolCallReply extends Timing {
  tool_calls: Array<{ id?: string; name: string; arguments: unknown }>;
  text?: string;
  usage?: FakeUsage;
}

/** An HTTP error, e.g. `{status: 429, headers: {'retry-after': '2'}}`; body `{error: {message}}`. */
export interface FakeErrorReply extends Timing {
  status: number;
  headers?: Record<string, string>;
  message?: string;
}

/** Drops the connection without any answer (a network error to the client). */
export interface FakeDropReply {
  drop: true;
}

export type FakeReply = FakeTextReply | FakeToolCallReply | FakeErrorReply | FakeDropReply;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
  body: any;
  /** True once the client closed the connection before the response was complete (a cancelled call). */
  cancelled: boolean;
  /** The client's TCP port: which process made the call (tests of a fleet find it by port). */
  remotePort: number | undefined;
  /** The client's address (which host made the call, in a multi-host test). */
  remoteAddress: string | undefined;
}

export interface FakeOpenAiServer {
  /** The base URL to configure: `http://127.0.0.1:<port>/v1`. */
  readonly url: string;
  /** Every request received, oldest first, including refused ones. */
  readonly requests: RecordedRequest[];
  /** Appends replies; each request to /chat/completions takes the next one. */
  script(...replies: FakeReply[]): void;
  /** Replies not yet taken. */
  remaining(): number;
  close(): Promise<void>;
}

export interface FakeOpenAiServerOptions {
  /** The address to listen on; default 127.0.0.1 (a multi-host test passes its bridge's address). */
  host?: string;
  /** When set, a request without `Authorization: Bearer <api_key>` gets 401 (no reply is taken). */
  api_key?: string;
  /** Answers requests once the script is used up; default: 500 "fake script exhausted". */
  fallback?: (request: RecordedRequest) => FakeReply;
}

/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions protocol from a script
 * (STYLE §5: external paid APIs get a local server that speaks their protocol). It answers text,
 * tool calls, errors with headers (429 + retry-after), dropped connections, slow headers and
 * stalled streams, and records what it was sent so tests can assert the wire.
 */
export async function startFakeOpenAiServer(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const entry = { timer: setTimeout(() => (timers.delete(entry), resolve()), ms), resolve };
      timers.add(entry);
    });

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBody(req);
    const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: parseJson(text), cancelled: false, remotePort: req.socket.remotePort, remoteAddress: req.socket.remoteAddress };
    res.once('close', () => {
      if (!res.writableFinished) recorded.cancelled = true;
    });
    requests.push(recorded);
    if (req.method !== 'POST' || !recorded.path.endsWith('/chat/completions')) return sendError(res, { status: 404, message: 'not found' });
    if (options.api_key !== undefined && req.headers.authorization !== `Bearer ${options.api_key}`) {
      return sendError(res, { status: 401, message: 'Incorrect API key provided' });
    }
    const reply = queue.shift() ?? options.fallback?.(recorded) ?? { status: 500, message: 'fake script exhausted' };
    if ('drop' in reply) return void res.socket?.destroy();
    if (reply.delay_ms !== undefined) await wait(reply.delay_ms);
    if (reply.hold !== undefined) await reply.hold.catch(() => undefined);
    if (res.destroyed) return;
    if ('status' in reply) return sendError(res, reply);
    const stream = recorded.body?.stream === true;
    const model = String(recorded.body?.model ?? 'fake-model');
    const usage = reply.usage ?? defaultUsage(text, reply);
    if (!stream) return sendJson(res, 200, completion(model, reply, usage));
    await sendStream(res, model, reply, recorded.body?.stream_options?.include_usage === true ? usage : undefined, wait);
  };

  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}/v1`,
    requests,
    script: (...replies) => void queue.push(...replies),
    remaining: () => queue.length,
    close: async () => {
      for (const entry of timers) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function completion(model: string, reply: FakeTextReply | FakeToolCallReply, usage: FakeUsage): Record<string, unknown> {
  const calls = 'tool_calls' in reply ? wireCalls(reply) : undefined;
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.text ?? null, ...(calls === undefined ? {} : { tool_calls: calls }) },
        finish_reason: calls === undefined ? ('finish_reason' in reply ? (reply.finish_reason ?? 'stop') : 'stop') : 'tool_calls',
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

async function sendStream(
  res: ServerResponse,
  model: string,
  reply: FakeTextReply | FakeToolCallReply,
  usage: FakeUsage | undefined,
  wait: (ms: number) => Promise<void>,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const send = (payload: unknown): void => {
    if (!res.destroyed) res.write(`data: ${JSON.stringify(payload)}\n\n`);
  };
  send(chunk({ role: 'assistant', content: '' }));
  const text = reply.text ?? '';
  const pieces = 'chunks' in reply && reply.chunks !== undefined ? reply.chunks : text.split(/(?<=\s)(?=\S)/).filter((p) => p !== '');
  for (const [i, piece] of pieces.entries()) {
    send(chunk({ content: piece }));
    if (i === 0 && 'pause_ms' in reply && reply.pause_ms !== undefined) await wait(reply.pause_ms);
    if (res.destroyed) return;
  }
  if ('tool_calls' in reply) {
    for (const [index, call] of wireCalls(reply).entries()) {
      const args = call.function.arguments;
      const half = Math.ceil(args.length / 2);
      send(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
      send(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
      send(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
    }
  }
  const finish = 'tool_calls' in reply ? 'tool_calls' : (reply.finish_reason ?? 'stop');
  send(chunk({}, finish));
  if (usage !== undefined) send({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 0, model, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
  if (!res.destroyed) res.end('data: [DONE]\n\n');
}

function wireCalls(reply: FakeToolCallReply): Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> {
  return reply.tool_calls.map((c, i) => ({
    id: c.id ?? `call_fake_${i}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }));
}

function sendError(res: ServerResponse, reply: FakeErrorReply): void {
  const body = { error: { message: reply.message ?? `fake error ${reply.status}`, type: 'fake_error', code: null } };
  sendJson(res, reply.status, body, reply.headers);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function defaultUsage(requestText: string, reply: FakeTextReply | FakeToolCallReply): FakeUsage {
  const out = (reply.text ?? '') + ('tool_calls' in reply ? JSON.stringify(reply.tool_calls) : '');
  return { prompt_tokens: Math.ceil(requestText.length / 4), completion_tokens: Math.ceil(out.length / 4) };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
