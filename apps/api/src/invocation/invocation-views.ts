import type { AgentResponse, InvocationOutcome, InvocationResult } from '@agent-platform/contracts';

/** spec AgentResponse: the reply of `send` (no latency field). */
export function toAgentResponse(result: InvocationOutcome): AgentResponse {
  return { content: result.content, tool_calls: result.tool_calls, tokens_used: result.tokens_used };
}

/** spec InvocationResult: the reply of `invoke`, and `details.result` of a DuplicateInvocation. */
export function toInvocationResult(result: InvocationOutcome): InvocationResult {
  return {
    content: result.content,
    tokens_used: result.tokens_used,
    duration_ms: result.duration_ms,
    correlation_id: result.correlation_id,
    source: result.source,
  };
}
