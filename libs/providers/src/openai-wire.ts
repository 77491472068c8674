import { estimateTokens, type ChatMessage, type CompletionRequest, type CompletionResult, type FinishReason, type RequestedToolCall, type TokenUsage } from '@agent-platform/domain';

/** The upstream answered 2xx with something that is not a chat completion. */
export class MalformedReplyError extends Error {
  override name = 'MalformedReplyError';
}

/** The `/chat/completions` request body for our request (OpenAI wire format). */
export function chatCompletionBody(request: CompletionRequest, stream: boolean): Record<string, unknown> {
  return {
    model: request.model,
    messages: request.messages.map(wireMessage),
    ...(request.tools !== undefined && request.tools.length > 0
      ? {
          tools: request.tools.map((t) => ({
            type: 'function',
            function: { name: t.name, description: t.description, parameters: t.input_schema },
          })),
        }
      : {}),
    // include_usage: the last chunk then carries the usage, which budgets need.
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

function wireMessage(message: ChatMessage): Record<string, unknown> {
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.tool_call_id ?? '', content: message.content };
  if (message.role === 'assistant' && message.tool_calls !== undefined && message.tool_calls.length > 0) {
    return {
      role: 'assistant',
      // OpenAI wants null, not '', for an assistant turn that only calls tools.
      content: message.content === '' ? null : message.content,
      tool_calls: message.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    };
  }
  return { role: message.role, content: message.content };
}

/** Parses a non-streamed chat completion. */
export function parseCompletion(json: unknown, request: CompletionRequest): CompletionResult {
  const choice = firstChoice(json);
  const message = record(choice.message);
  if (message === undefined) throw new MalformedReplyError('choices[0].message is missing');
  const content = typeof message.content === 'string' ? message.content : '';
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.map((c: unknown, i) => wireToolCall(c, i)) : [];
  return finish(request, content, calls, record(record(json)?.usage), choice.finish_reason);
}

/** Accumulates streamed chunks: content deltas in order, tool-call deltas merged by `index`. */
export class StreamAccumulator {
  private content = '';
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();
  private finishReason: unknown = undefined;
  private usage: Record<string, unknown> | undefined;

  constructor(private readonly onToken: (text: string) => void) {}

  /** Takes one `data:` payload (already JSON-parsed). */
  push(chunk: unknown): void {
    const body = record(chunk);
    if (body === undefined) throw new MalformedReplyError('a stream chunk is not a JSON object');
    if (body.error !== undefined) throw new MalformedReplyError(`the stream reported an error: ${errorText(body.error)}`);
    this.usage = record(body.usage) ?? this.usage;
    const choice = Array.isArray(body.choices) ? record(body.choices[0]) : undefined;
    if (choice === undefined) return;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.finishReason = choice.finish_reason;
    const delta = record(choice.delta);
    if (typeof delta?.content === 'string' && delta.content !== '') {
      this.content += delta.content;
      this.onToken(delta.content);
    }
    if (Array.isArray(delta?.tool_calls)) for (const part of delta.tool_calls) this.mergeToolCall(part);
  }

  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  result(request: CompletionRequest): CompletionResult {
    const calls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([i, c]) => ({ ...c, id: c.id || `call_${i}` }));
    return finish(request, this.content, calls, this.usage, this.finishReason);
  }

  private mergeToolCall(part: unknown): void {
    const p = record(part);
    const index = typeof p?.index === 'number' ? p.index : this.calls.size;
    const fn = record(p?.function);
    const call = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
    if (typeof p?.id === 'string' && p.id !== '') call.id = p.id;
    if (typeof fn?.name === 'string') call.name += fn.name;
    if (typeof fn?.arguments === 'string') call.arguments += fn.arguments;
    this.calls.set(index, call);
  }
}

/** The upstream's own error text from an error body (`{error: {message}}`), if any. */
export function errorText(error: unknown): string {
  const e = record(error);
  if (typeof e?.message === 'string') return e.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

function finish(
  request: CompletionRequest,
  content: string,
  tool_calls: RequestedToolCall[],
  usage: Record<string, unknown> | undefined,
  reason: unknown,
): CompletionResult {
  return { content, tool_calls, usage: readUsage(usage, request, content, tool_calls), finish_reason: finishReason(reason) };
}

/**
 * The upstream's token counts; when it sends none (some servers ignore `include_usage`), the
 * chars/4 estimate of D6, so that usage and budgets never record a free call.
 */
function readUsage(usage: Record<string, unknown> | undefined, request: CompletionRequest, content: string, calls: RequestedToolCall[]): TokenUsage {
  const input = usage?.prompt_tokens;
  const output = usage?.completion_tokens;
  if (typeof input === 'number' && typeof output === 'number') return { input_tokens: input, output_tokens: output };
  const sent = request.messages.map((m) => m.content + (m.tool_calls ?? []).map((c) => c.arguments).join('')).join('\n');
  return {
    input_tokens: estimateTokens(sent),
    output_tokens: estimateTokens(content + calls.map((c) => c.name + c.arguments).join('')),
  };
}

function finishReason(value: unknown): FinishReason {
  if (value === 'function_call') return 'tool_calls';
  return value === 'stop' || value === 'tool_calls' || value === 'length' || value === 'content_filter' ? value : 'other';
}

function firstChoice(json: unknown): Record<string, unknown> {
  const body = record(json);
  if (body === undefined) throw new MalformedReplyError('the reply is not a JSON object');
  if (body.error !== undefined) throw new MalformedReplyError(`the reply reported an error: ${errorText(body.error)}`);
  const choice = Array.isArray(body.choices) ? record(body.choices[0]) : undefined;
  if (choice === undefined) throw new MalformedReplyError('the reply has no choices');
  return choice;
}

function wireToolCall(value: unknown, index: number): RequestedToolCall {
  const call = record(value);
  const fn = record(call?.function);
  if (typeof fn?.name !== 'string') throw new MalformedReplyError(`tool_calls[${index}] has no function name`);
  const args = fn.arguments;
  return {
    id: typeof call?.id === 'string' && call.id !== '' ? call.id : `call_${index}`,
    name: fn.name,
    // Some servers send the arguments as an object instead of JSON text.
    arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
  };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
