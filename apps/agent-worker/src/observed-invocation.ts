import { sourceName, type InvocationService } from '@agent-platform/domain';
import { errorType, inSpan, withCorrelation, type PlatformInstruments } from '@agent-platform/observability';

/**
 * The worker's invocation service, traced and measured (docs/observability.md): every invocation
 * this process runs (an `agents.invoke` request, a workflow step, a channel message) is one
 * `invoke_agent` span, with the agent id, the source, the invocation id and the correlation id
 * (on it and on every span below it: the model calls and the tool calls), and one sample of
 * `invocations_total` / `invocation_duration_seconds` / `invocation_tokens_total`. The span never
 * holds the message or the reply.
 */
export function observeInvocations(
  service: InvocationService,
  instruments: PlatformInstruments,
): InvocationService {
  return {
    ...service,
    execute: (request, options) => {
      const source = sourceName(request.source);
      const attributes = {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.id': request.agent_id,
        'invocation.source': source,
        'invocation.id': request.invocation_id,
        'invocation.workflow_type': request.workflow_type,
      };
      const started = performance.now();
      const seconds = (): number => (performance.now() - started) / 1000;
      return withCorrelation(request.correlation_id, () =>
        inSpan('invoke_agent', { attributes }, async (span) => {
          try {
            const execution = await service.execute(request, options);
            const outcome = execution.duplicate ? 'duplicate' : 'completed';
            span.setAttributes({
              'invocation.outcome': outcome,
              'invocation.tokens_used': execution.result.tokens_used,
            });
            instruments.invocation({
              source,
              outcome,
              seconds: seconds(),
              tokens: execution.duplicate ? 0 : execution.result.tokens_used,
            });
            return execution;
          } catch (error) {
            instruments.invocation({ source, outcome: errorType(error), seconds: seconds(), tokens: 0 });
            throw error;
          }
        }),
      );
    },
  };
}
