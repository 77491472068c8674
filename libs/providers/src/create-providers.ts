import type { PlatformConfig } from '@agent-platform/contracts';
import { createModelRegistry, Errors, type ModelInfo, type ModelProvider, type ModelRegistry } from '@agent-platform/domain';
import { createLocalProvider, LOCAL_PROVIDER_ID } from './local-provider.ts';
import { observeProvider, type ModelCallSample } from './observed-provider.ts';
import { createOpenAiProvider, type OpenAiProviderOptions, type RetryEvent } from './openai-provider.ts';

export interface CreateProvidersOptions {
  /** The process environment (only main.ts reads `process.env`); API keys are read from it per call. */
  env: Record<string, string | undefined>;
  /**
   * Asked first for the key named by `api_key_env` (the vault can supply keys this way); a
   * null/undefined/empty answer falls back to `env`.
   */
  resolveSecret?: (name: string) => string | null | undefined | Promise<string | null | undefined>;
  onRetry?: (event: RetryEvent) => void;
  /** Each finished model call, for the metrics (`model_calls_total`, `model_tokens_total`...). */
  observe?: (sample: ModelCallSample) => void;
  /** Test seams passed to every openai provider (sleep, clocks, random). */
  http?: Pick<OpenAiProviderOptions, 'sleep' | 'now' | 'wallClock' | 'random'>;
}

type ConfigSource = PlatformConfig | (() => PlatformConfig);

/**
 * The model registry of a config: the built-in `local` provider always, plus each `[[providers]]`
 * table, with `[model_calls]` timeouts and retries and `[models] default`. Given a function, the
 * registry follows the running config: it is rebuilt when the config object changes (a reload
 * swaps it whole), so a reload applies to the next call while calls in flight finish on the
 * providers they started with. Building is pure: nothing connects until a call is made.
 */
export function createProviders(config: ConfigSource, options: CreateProvidersOptions): ModelRegistry {
  if (typeof config !== 'function') return buildRegistry(config, options);
  let built: { from: PlatformConfig; registry: ModelRegistry } | null = null;
  const current = (): ModelRegistry => {
    const now = config();
    if (built?.from !== now) built = { from: now, registry: buildRegistry(now, options) };
    return built.registry;
  };
  return {
    providers: () => current().providers(),
    models: (): ModelInfo[] => current().models(),
    model: (key) => current().model(key),
    defaultKey: () => current().defaultKey(),
    resolve: (key) => current().resolve(key),
  };
}

function buildRegistry(config: PlatformConfig, options: CreateProvidersOptions): ModelRegistry {
  const local = config.providers.find((entry) => entry.id === LOCAL_PROVIDER_ID);
  const providers: ModelProvider[] = [createLocalProvider({ delayMs: local?.delay_ms ?? 0 })];
  for (const entry of config.providers) {
    if (entry.id === LOCAL_PROVIDER_ID) continue;
    if (entry.kind !== 'openai' || entry.base_url === undefined) {
      // libs/config refuses such a file; reaching here means a config built in code skipped validation.
      throw Errors.config(`providers: "${entry.id}" needs kind = "openai" and a base_url`);
    }
    const calls = config.model_calls;
    providers.push(
      createOpenAiProvider({
        id: entry.id,
        base_url: entry.base_url,
        models: entry.models ?? [],
        ...(entry.api_key_env === undefined ? {} : { apiKey: keyReader(entry.id, entry.api_key_env, options) }),
        connect_timeout_ms: calls.connect_timeout_secs * 1000,
        request_timeout_ms: calls.request_timeout_secs * 1000,
        retry: {
          max_attempts: calls.llm_retry_max_attempts,
          base_delay_ms: calls.llm_retry_base_delay_ms,
          max_delay_ms: calls.llm_retry_max_delay_ms,
          max_total_ms: calls.llm_retry_max_total_secs * 1000,
        },
        ...(options.onRetry === undefined ? {} : { onRetry: options.onRetry }),
        ...options.http,
      }),
    );
  }
  // Traced (while tracing is on) and measured where the call is made: this process.
  return createModelRegistry({ providers: providers.map((p) => observeProvider(p, options.observe)), defaultKey: config.models.default });
}

/** A missing key fails the call (not the boot): the variable may be set for another process role. */
function keyReader(providerId: string, envName: string, options: CreateProvidersOptions): () => Promise<string> {
  return async () => {
    const fromHook = await options.resolveSecret?.(envName);
    const key = fromHook !== null && fromHook !== undefined && fromHook !== '' ? fromHook : options.env[envName];
    if (key === undefined || key === '') {
      throw Errors.provider(providerId, `no API key: the environment variable ${envName} (api_key_env) is not set`, { reason: 'missing_api_key' });
    }
    return key;
  };
}
