import type { IncomingMessage } from 'node:http';
import { Errors, type CompletionRequest, type CompletionResult } from '@agent-platform/domain';
import { ConnectTimeoutError, postHttp, readText } from './http-transport.ts';
import { chatCompletionBody, errorText, MalformedReplyError, parseCompletion, StreamAccumulator } from './openai-wire.ts';
import { isRetryableStatus, retryAfterMs } from './retry-policy.ts';
import { sseData } from './sse-reader.ts';

/** A 2xx body larger than this is refused: no chat completion is anywhere near it. */
const MAX_REPLY_BYTES = 32 * 1024 * 1024;
/** Enough of an error body to find the upstream's message. */
const MAX_ERROR_BYTES = 64 * 1024;

export interface AttemptContext {
  providerId: string;
  endpoint: URL;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** Wall-clock ms, for a retry-after given as an HTTP date. */
  wallClock: () => number;
}

export interface AttemptCall {
  request: CompletionRequest;
  apiKey: string | undefined;
  signal: AbortSignal | undefined;
  onToken: ((text: string) => void) | undefined;
}

/** Why an attempt got no reply; the retry loop decides whether to try again. */
export interface AttemptFailure {
  reason: string;
  retryable: boolean;
  upstream_status?: number;
  upstream_message?: string;
  retry_after_ms?: number;
  connect_timeout?: boolean;
}

export type AttemptOutcome = { result: CompletionResult } | { failure: AttemptFailure };

/**
 * One HTTP request to `/chat/completions`, bounded by the request timeout from the first byte
 * sent to the last byte of the reply. Throws (no retry) when the retry question is settled:
 * the caller aborted, the request timed out (the upstream may have done the work, so sending it
 * again would pay twice), or a 2xx reply broke or was malformed (tokens may already have been
 * streamed to the caller). Returns a failure for everything that happened before a reply began.
 */
export async function attemptCompletion(ctx: AttemptContext, call: AttemptCall): Promise<AttemptOutcome> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), ctx.requestTimeoutMs);
  const signal = call.signal === undefined ? timeout.signal : AbortSignal.any([call.signal, timeout.signal]);
  const settled = (): void => {
    call.signal?.throwIfAborted();
    if (timeout.signal.aborted) {
      throw Errors.providerTimeout(ctx.providerId, `no complete reply within ${seconds(ctx.requestTimeoutMs)} (request timeout)`, {
        timeout_ms: ctx.requestTimeoutMs,
      });
    }
  };
  const streaming = call.onToken !== undefined;
  try {
    let response;
    try {
      response = await postHttp({
        url: ctx.endpoint,
        headers: headers(call.apiKey, streaming),
        body: JSON.stringify(chatCompletionBody(call.request, streaming)),
        signal,
        connectTimeoutMs: ctx.connectTimeoutMs,
      });
    } catch (error) {
      settled();
      if (error instanceof ConnectTimeoutError) return { failure: { reason: `no connection within ${seconds(error.timeoutMs)}`, retryable: true, connect_timeout: true } };
      return { failure: { reason: `unreachable (${codeOf(error)})`, retryable: true } };
    }
    const { status, headers: got, body } = response;
    if (status < 200 || status >= 300) {
      const text = await readText(body, MAX_ERROR_BYTES).catch(() => '');
      settled();
      const after = retryAfterMs(got, ctx.wallClock());
      const message = upstreamMessage(text, call.apiKey);
      return {
        failure: {
          reason: `answered HTTP ${status}`,
          retryable: isRetryableStatus(status, got),
          upstream_status: status,
          ...(message === undefined ? {} : { upstream_message: message }),
          ...(after === undefined ? {} : { retry_after_ms: after }),
        },
      };
    }
    try {
      const isStream = String(got['content-type'] ?? '').includes('text/event-stream');
      return { result: isStream ? await readStream(body, call) : await readWhole(body, call) };
    } catch (error) {
      settled();
      if (error instanceof MalformedReplyError || error instanceof SyntaxError || error instanceof RangeError) {
        throw Errors.provider(ctx.providerId, `malformed reply: ${scrub(error.message, call.apiKey)}`, { upstream_status: status });
      }
      throw Errors.provider(ctx.providerId, `the connection broke while the reply was being read (${codeOf(error)})`, { upstream_status: status });
    }
  } finally {
    clearTimeout(timer);
  }
}

async function readWhole(body: IncomingMessage, call: AttemptCall): Promise<CompletionResult> {
  const result = parseCompletion(JSON.parse(await readText(body, MAX_REPLY_BYTES)), call.request);
  // Asked to stream but answered in one piece (servers may ignore `stream`): still deliver the text.
  if (call.onToken !== undefined && result.content !== '') call.onToken(result.content);
  return result;
}

async function readStream(body: IncomingMessage, call: AttemptCall): Promise<CompletionResult> {
  const acc = new StreamAccumulator(call.onToken ?? (() => undefined));
  let done = false;
  for await (const data of sseData(body)) {
    if (data.trim() === '[DONE]') {
      done = true;
      break;
    }
    acc.push(JSON.parse(data));
  }
  if (!done && !acc.finished) throw new MalformedReplyError('the stream ended before the reply was complete');
  return acc.result(call.request);
}

function headers(apiKey: string | undefined, streaming: boolean): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: streaming ? 'text/event-stream' : 'application/json',
    'user-agent': 'agent-platform',
    ...(apiKey === undefined || apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` }),
  };
}

/** The upstream's error message, without the key (some servers quote a rejected key back) and short. */
function upstreamMessage(text: string, apiKey: string | undefined): string | undefined {
  if (text.trim() === '') return undefined;
  let message = text;
  try {
    const parsed: unknown = JSON.parse(text);
    message = typeof parsed === 'object' && parsed !== null && 'error' in parsed ? errorText(parsed.error) : text;
  } catch {
    // Not JSON: an HTML error page or plain text; keep its start.
  }
  return scrub(message, apiKey);
}

export function scrub(text: string, apiKey: string | undefined): string {
  const clean = apiKey === undefined || apiKey === '' ? text : text.replaceAll(apiKey, '[redacted]');
  return clean.length > 300 ? `${clean.slice(0, 300)}…` : clean;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
