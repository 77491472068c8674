import type { AgentRecord } from '../agents/agent-record.ts';
import type { Answered } from './invocation-execution.ts';
import { sourceName } from './invocation-source.ts';
import type { InvocationRequest, InvocationServiceDeps } from './invocation-types.ts';
import { recordUsageEvent } from './usage-events.ts';
import { valueClassOf } from './value-class.ts';

export interface InvocationBookkeeping {
  /**
   * After a paid-for, correct answer: the session turns (unless stateless) and the usage event.
   * Failing to record must not fail the call: problems are logged.
   */
  answered(agent: AgentRecord, request: InvocationRequest, answered: Answered, stateless: boolean): Promise<void>;
}

type BookkeepingDeps = Pick<InvocationServiceDeps, 'store' | 'clock' | 'sessions' | 'settings'> & {
  warn: NonNullable<InvocationServiceDeps['warn']>;
};

export function createInvocationBookkeeping(deps: BookkeepingDeps): InvocationBookkeeping {
  async function answered(agent: AgentRecord, request: InvocationRequest, { model, loop, cost }: Answered, stateless: boolean): Promise<void> {
    const at = deps.clock.now().toISOString();
    const workflowType = request.workflow_type ?? null;
    // Both at once: one group commit of the embedded store, not two (docs/performance.md).
    await Promise.all([
      stateless
        ? undefined
        : deps.sessions
            .append(
              agent.id,
              [
                { role: 'user', content: request.message, at },
                { role: 'assistant', content: loop.content, at },
              ],
              deps.settings().session_max_turns,
              deps.settings().session_max_bytes,
            )
            .catch((err: unknown) => deps.warn({ err, agent_id: agent.id }, 'could not append to the agent session')),
      recordUsageEvent(deps.store, {
        at,
        agent_id: agent.id,
        provider_id: model.provider.id,
        model: model.model,
        input_tokens: loop.usage.input_tokens,
        output_tokens: loop.usage.output_tokens,
        model_calls: loop.rounds,
        cost_usd: cost,
        workflow_type: workflowType,
        value_class: workflowType === null ? null : valueClassOf(workflowType),
        source: sourceName(request.source),
      }).catch((err: unknown) => deps.warn({ err, agent_id: agent.id }, 'could not record a usage event')),
    ]);
  }

  return { answered };
}
