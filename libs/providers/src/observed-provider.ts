import type {
  CompletionOptions,
  CompletionRequest,
  CompletionResult,
  ModelProvider,
} from '@agent-platform/domain';
import { errorType, inSpan, tracingEnabled } from '@agent-platform/observability';

/** One finished model call, as the metrics count it (docs/observability.md "Metrics"). */
export interface ModelCallSample {
  provider: string;
  /** `success`, or the error's category (ProviderError, Timeout, InvocationCancelled...). */
  outcome: string;
  seconds: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * A provider whose calls are traced and measured: one client span per call (`chat <model>`, with
 * the provider, the model and the token counts, the OpenTelemetry GenAI names; never a message,
 * a tool argument or the reply) and one `ModelCallSample` per call for the metrics. A provider
 * with neither tracing on nor `observe` is returned unwrapped.
 */
export function observeProvider(
  provider: ModelProvider,
  observe: ((sample: ModelCallSample) => void) | undefined,
): ModelProvider {
  if (!tracingEnabled() && observe === undefined) return provider;
  const complete = async (
    request: CompletionRequest,
    options?: CompletionOptions,
  ): Promise<CompletionResult> => {
    const started = performance.now();
    const sample = (outcome: string, result?: CompletionResult): void =>
      observe?.({
        provider: provider.id,
        outcome,
        seconds: (performance.now() - started) / 1000,
        inputTokens: result?.usage.input_tokens ?? 0,
        outputTokens: result?.usage.output_tokens ?? 0,
      });
    const attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': provider.kind,
      'gen_ai.provider.name': provider.id,
      'gen_ai.request.model': request.model,
      'gen_ai.request.tools': request.tools?.length ?? 0,
      'gen_ai.request.streaming': options?.onToken !== undefined,
    };
    return inSpan(`chat ${request.model}`, { role: 'client', attributes }, async (span) => {
      try {
        const result = await provider.complete(request, options);
        span.setAttributes({
          'gen_ai.usage.input_tokens': result.usage.input_tokens,
          'gen_ai.usage.output_tokens': result.usage.output_tokens,
          'gen_ai.response.finish_reasons': result.finish_reason,
          'gen_ai.response.tool_calls': result.tool_calls.length,
        });
        sample('success', result);
        return result;
      } catch (error) {
        sample(errorType(error));
        throw error;
      }
    });
  };
  return {
    id: provider.id,
    kind: provider.kind,
    ...(provider.base_url === undefined ? {} : { base_url: provider.base_url }),
    models: () => provider.models(),
    complete,
  };
}
