import { setTimeout } from 'node:timers/promises';
import { estimateTokens, Errors, type CompletionOptions, type CompletionRequest, type CompletionResult, type ModelProvider } from '@agent-platform/domain';

export const LOCAL_PROVIDER_ID = 'local';
export const LOCAL_MODEL = 'echo';

/**
 * The built-in offline model of DECISIONS D6, deterministic for development and tests. Its reply
 * is exactly the text of the LAST `user` message of the request (later assistant or tool messages
 * are ignored; none at all echoes ''). Usage: input = ceil(len(that text)/4), output =
 * ceil(len(reply)/4), so `tokens_used` = their sum, as D6 states; lengths count code points. It
 * never calls tools (offered tools are ignored) and costs nothing. With `onToken`, the echo is
 * streamed word by word (each piece keeps its trailing whitespace, so the pieces join to the reply).
 * `delayMs` (`[[providers]] id = "local"`, `delay_ms`) makes every answer take that long, as a
 * real model would; aborting the call ends the wait at once.
 */
export function createLocalProvider(options: { delayMs?: number } = {}): ModelProvider {
  const delayMs = options.delayMs ?? 0;
  const complete = async (request: CompletionRequest, options: CompletionOptions = {}): Promise<CompletionResult> => {
    options.signal?.throwIfAborted();
    if (request.model !== LOCAL_MODEL) throw Errors.notFound('model', `${LOCAL_PROVIDER_ID}/${request.model}`);
    if (delayMs > 0) {
      await setTimeout(delayMs, undefined, options.signal === undefined ? {} : { signal: options.signal }).catch((error: unknown) => {
        // The caller's reason (a cancel, a timeout), not the timer's AbortError.
        throw options.signal?.aborted === true ? options.signal.reason : error;
      });
    }
    const input = request.messages.findLast((m) => m.role === 'user')?.content ?? '';
    const content = input;
    if (options.onToken !== undefined) {
      for (const piece of wordPieces(content)) {
        options.signal?.throwIfAborted();
        options.onToken(piece);
      }
    }
    return {
      content,
      tool_calls: [],
      usage: { input_tokens: estimateTokens(input), output_tokens: estimateTokens(content) },
      finish_reason: 'stop',
    };
  };
  return { id: LOCAL_PROVIDER_ID, kind: 'local', models: () => [LOCAL_MODEL], complete };
}

/** "  hi there " -> ["  hi ", "there "]; whitespace-only text is one piece. */
function wordPieces(text: string): string[] {
  if (text === '') return [];
  return text.match(/\s*\S+\s*/g) ?? [text];
}
