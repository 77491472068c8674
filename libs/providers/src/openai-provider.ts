import { setTimeout as delay } from 'node:timers/promises';
import { Errors, type CompletionOptions, type CompletionRequest, type CompletionResult, type ModelProvider, type PlatformError } from '@agent-platform/domain';
import { attemptCompletion, type AttemptContext, type AttemptFailure } from './openai-attempt.ts';
import { backoffDelayMs, type RetryPolicy } from './retry-policy.ts';

/** spec §Limits defaults; `[model_calls]` in the config file overrides them. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;
export const DEFAULT_RETRY_POLICY: RetryPolicy = { max_attempts: 10, base_delay_ms: 1000, max_delay_ms: 60_000, max_total_ms: 300_000 };

/** Told before each retry wait, for logs and metrics: never the key, the body or the reply. */
export interface RetryEvent {
  provider: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  delay_ms: number;
  reason: string;
  upstream_status?: number;
}

export interface OpenAiProviderOptions {
  id: string;
  /** e.g. `http://127.0.0.1:8000/v1`; requests go to `<base_url>/chat/completions`. */
  base_url: string;
  models?: readonly string[];
  /** Read at every call, so a rotated key applies at once; undefined = send no Authorization. */
  apiKey?: () => string | undefined | Promise<string | undefined>;
  connect_timeout_ms?: number;
  request_timeout_ms?: number;
  retry?: Partial<RetryPolicy>;
  onRetry?: (event: RetryEvent) => void;
  /** Waits between attempts; tests pass one that returns at once and records the delay. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Monotonic ms for the retry time budget. */
  now?: () => number;
  /** Wall-clock ms, to read a retry-after given as an HTTP date. */
  wallClock?: () => number;
  random?: () => number;
}

/**
 * A provider speaking the OpenAI chat-completions protocol (DECISIONS D6): OpenAI, vLLM, Ollama,
 * llama.cpp. Retries per spec §Limits: 408/409/429/5xx and network errors are tried again up to
 * `max_attempts` times, waiting an exponential, jittered backoff of which the server's retry-after
 * is a floor; no retry starts when its wait would end past `max_total_ms` after the first attempt.
 */
export function createOpenAiProvider(options: OpenAiProviderOptions): ModelProvider {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const sleep = options.sleep ?? abortableSleep;
  const now = options.now ?? (() => performance.now());
  const random = options.random ?? Math.random;
  const ctx: AttemptContext = {
    providerId: options.id,
    endpoint: new URL(`${options.base_url.replace(/\/+$/, '')}/chat/completions`),
    connectTimeoutMs: options.connect_timeout_ms ?? DEFAULT_CONNECT_TIMEOUT_MS,
    requestTimeoutMs: options.request_timeout_ms ?? DEFAULT_REQUEST_TIMEOUT_MS,
    wallClock: options.wallClock ?? Date.now,
  };
  const models = [...(options.models ?? [])];

  const complete = async (request: CompletionRequest, callOptions: CompletionOptions = {}): Promise<CompletionResult> => {
    const { signal, onToken } = callOptions;
    signal?.throwIfAborted();
    const apiKey = await options.apiKey?.();
    const started = now();
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await attemptCompletion(ctx, { request, apiKey, signal, onToken });
      if ('result' in outcome) return outcome.result;
      const failure = outcome.failure;
      if (!failure.retryable || attempt >= policy.max_attempts) throw finalError(options.id, failure, attempt, null);
      const wait = backoffDelayMs(policy, attempt, failure.retry_after_ms, random);
      if (now() - started + wait > policy.max_total_ms) throw finalError(options.id, failure, attempt, policy.max_total_ms);
      options.onRetry?.({
        provider: options.id,
        attempt,
        delay_ms: wait,
        reason: failure.reason,
        ...(failure.upstream_status === undefined ? {} : { upstream_status: failure.upstream_status }),
      });
      await sleep(wait, signal);
      signal?.throwIfAborted();
    }
  };

  return { id: options.id, kind: 'openai', base_url: withoutCredentials(options.base_url), models: () => [...models], complete };
}

function finalError(providerId: string, failure: AttemptFailure, attempts: number, budgetMs: number | null): PlatformError {
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  const budget = budgetMs === null ? '' : `; retry time budget of ${budgetMs / 1000} s reached`;
  const said = failure.upstream_message === undefined ? '' : `: ${failure.upstream_message}`;
  const details = {
    attempts,
    ...(failure.upstream_status === undefined ? {} : { upstream_status: failure.upstream_status }),
    ...(failure.upstream_message === undefined ? {} : { upstream_message: failure.upstream_message }),
  };
  const message = `${failure.reason} (${tries}${budget})${said}`;
  return failure.connect_timeout === true ? Errors.providerTimeout(providerId, message, details) : Errors.provider(providerId, message, details);
}

async function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    signal?.throwIfAborted();
    throw error;
  }
}

/** The endpoint as shown by GET /providers: a password in the URL is never shown. */
function withoutCredentials(baseUrl: string): string {
  const url = new URL(baseUrl);
  if (url.username === '' && url.password === '') return baseUrl;
  url.username = '';
  url.password = '';
  return url.toString();
}
