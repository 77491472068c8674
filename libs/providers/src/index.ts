export { createLocalProvider, LOCAL_MODEL, LOCAL_PROVIDER_ID } from './local-provider.ts';
export {
  createOpenAiProvider,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_RETRY_POLICY,
  type OpenAiProviderOptions,
  type RetryEvent,
} from './openai-provider.ts';
export { createProviders, type CreateProvidersOptions } from './create-providers.ts';
export { backoffDelayMs, isRetryableStatus, retryAfterMs, type RetryPolicy } from './retry-policy.ts';
export { observeProvider, type ModelCallSample } from './observed-provider.ts';
