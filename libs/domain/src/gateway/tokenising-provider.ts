import type { TokenVault } from '@agent-platform/privacy';
import type {
  ChatMessage,
  CompletionRequest,
  CompletionResult,
  ModelProvider,
  RequestedToolCall,
} from '../models/model-provider.ts';

/**
 * The model-provider port with the privacy gateway in front of it, for ONE model request (one
 * invocation's tool loop): every call sends the conversation with personal data replaced by the
 * vault's tokens, and the reply comes back with the tokens replaced by the values, in its text, its
 * streamed pieces and its tool-call arguments (a tool must get the real value). `beforeCall` runs
 * after tokenising and before the provider is called (the audit entries that must exist before any
 * token leaves the process).
 *
 * What is tokenised: user, assistant and tool messages, and the arguments of earlier tool calls.
 * Not the system prompt: it is the operator's text (AGENT.md, competencies), and a carrier's own
 * phone number in it would otherwise make every request look like it held personal data.
 */
export function tokenisingProvider(
  inner: ModelProvider,
  vault: TokenVault,
  beforeCall: () => Promise<void>,
): ModelProvider {
  return {
    id: inner.id,
    kind: inner.kind,
    ...(inner.base_url === undefined ? {} : { base_url: inner.base_url }),
    models: () => inner.models(),
    async complete(request, options = {}) {
      const tokenised = tokeniseRequest(vault, request);
      await beforeCall();
      const stream = options.onToken === undefined ? null : vault.streamHydrator(options.onToken);
      const reply = await inner.complete(tokenised, {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(stream === null ? {} : { onToken: (piece: string) => stream.push(piece) }),
      });
      stream?.flush();
      return hydrateReply(vault, reply);
    },
  };
}

/** The request as the provider sees it. Token-shaped text already in it is reserved first, so no minted token can collide with it. */
export function tokeniseRequest(vault: TokenVault, request: CompletionRequest): CompletionRequest {
  for (const message of request.messages) {
    vault.reserve(message.content);
    for (const call of message.tool_calls ?? []) vault.reserve(call.arguments);
  }
  return { ...request, messages: request.messages.map((message) => tokeniseMessage(vault, message)) };
}

function tokeniseMessage(vault: TokenVault, message: ChatMessage): ChatMessage {
  if (message.role === 'system') return message;
  const content = vault.tokenise(message.content);
  // Nothing found in a message without tool calls (most of a history): the message itself, not a copy.
  if (content === message.content && message.tool_calls === undefined) return message;
  const out: ChatMessage = { ...message, content };
  if (message.tool_calls !== undefined)
    out.tool_calls = message.tool_calls.map((call) => ({
      ...call,
      arguments: tokeniseArguments(vault, call.arguments),
    }));
  return out;
}

/**
 * Tool-call arguments are JSON text: each string in them is tokenised on its own (a value that
 * needs escaping in JSON is found as written), then the object is written again. Text that is not
 * JSON is tokenised as it is.
 */
function tokeniseArguments(vault: TokenVault, args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return vault.tokenise(args);
  }
  return JSON.stringify(mapStrings(parsed, (text) => vault.tokenise(text)));
}

function mapStrings(value: unknown, f: (text: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  return value;
}

function hydrateReply(vault: TokenVault, reply: CompletionResult): CompletionResult {
  return {
    ...reply,
    content: vault.hydrate(reply.content),
    tool_calls: reply.tool_calls.map((call): RequestedToolCall => ({
      ...call,
      arguments: vault.hydrate(call.arguments, { json: true }),
    })),
  };
}
