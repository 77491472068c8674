/**
 * The model-provider port (DECISIONS D6): one chat-completion call to a model, with tools. The
 * built-in `local` provider and the OpenAI-protocol adapter live in `@agent-platform/providers`;
 * agents never see which one answered. Field names are the wire's snake_case (STYLE §2).
 */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** A tool call the model asked for. `arguments` is the model's JSON text, unparsed. */
export interface RequestedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * One message of a conversation. An `assistant` message may carry the `tool_calls` it made; each
 * `tool` message answers one of them and names it in `tool_call_id`.
 */
export interface ChatMessage {
  role: ChatRole;
  content: string;
  tool_calls?: RequestedToolCall[];
  tool_call_id?: string;
}

/** A tool offered to the model; `input_schema` is the JSON Schema of its arguments object. */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface CompletionRequest {
  /** The model name within the provider (`gpt-4o-mini`), not the `provider/model` key. */
  model: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
}

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Why the model stopped; providers map their own values onto these, anything else is `other`. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface CompletionResult {
  content: string;
  /** Empty when the model answered in text only. */
  tool_calls: RequestedToolCall[];
  usage: TokenUsage;
  finish_reason: FinishReason;
}

export interface CompletionOptions {
  /** Aborting rejects the call with the signal's reason and stops any retry wait. */
  signal?: AbortSignal;
  /** Given: the reply is streamed and each piece of content text is passed here, in order. */
  onToken?: (text: string) => void;
}

export type ProviderKind = 'local' | 'openai';

/**
 * A configured model provider. `complete` either resolves with the whole reply or rejects with a
 * PlatformError: `ProviderError` (the upstream failed or refused; retries already spent) or
 * `Timeout` (the provider did not answer within the configured time). Never with the API key or
 * the request body in the error.
 */
export interface ModelProvider {
  readonly id: string;
  readonly kind: ProviderKind;
  /** The endpoint, without credentials; absent for the built-in provider. */
  readonly base_url?: string;
  /** Model names the provider offers; empty when the config lists none (any name is passed on). */
  models(): string[];
  complete(request: CompletionRequest, options?: CompletionOptions): Promise<CompletionResult>;
}
