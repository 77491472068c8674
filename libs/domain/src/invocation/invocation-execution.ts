import type { InvocationOutcome } from '@agent-platform/contracts';
import type { AgentRecord } from '../agents/agent-record.ts';
import { composeSystemPrompt, loadAgentCompetencies, type EquippedCompetency } from '../agents/system-prompt.ts';
import type { ChatMessage } from '../models/model-provider.ts';
import type { GatewaySession } from '../gateway/model-gateway.ts';
import type { ResolvedModel } from '../models/model-registry.ts';
import { runToolLoop, type ToolLoopResult } from '../models/tool-loop.ts';
import type { InvocationOptions, InvocationRequest, InvocationServiceDeps, ProviderPrices } from './invocation-types.ts';
import { invocationFences, invocationHold } from './invocation-fences.ts';

/** A paid-for answer and what its bookkeeping (session, usage event) needs. */
export interface Answered {
  result: InvocationOutcome;
  model: ResolvedModel;
  loop: ToolLoopResult;
  cost: number;
  /**
   * The gateway's closing writes (traffic row, hydrated entry), still under way: the caller awaits
   * them beside its own bookkeeping, so they share one group commit. Never rejects.
   */
  gatewaySettled: Promise<void>;
}

export interface InvocationExecutor {
  /**
   * The licence gate before any provider call (D3, D6: a refusal is 403 and holds no
   * transaction), then the prompt, the agent's tools and the model's tool loop. Only an answer
   * that can be delivered spends the transaction; any failure releases it.
   */
  answer(agent: AgentRecord, request: InvocationRequest, signal: AbortSignal, options: InvocationOptions, startedMs: number): Promise<Answered>;
}

type ExecutionDeps = Pick<InvocationServiceDeps, 'store' | 'clock' | 'sessions' | 'models' | 'licence' | 'settings' | 'prices' | 'tools' | 'gateway' | 'faults'>;

export function createInvocationExecutor(deps: ExecutionDeps): InvocationExecutor {
  async function answer(
    agent: AgentRecord,
    request: InvocationRequest,
    signal: AbortSignal,
    options: InvocationOptions,
    startedMs: number,
  ): Promise<Answered> {
    // The conversation first: the privacy gateway routes by what it holds, and the licence is
    // checked for the provider the request will actually reach.
    const { messages, competencies } = await conversation(agent, request.message, options.stateless === true);
    const gateway = await openGateway(agent, request, messages);
    const model = gateway.model;
    // An invocation its requester may abandon and send again: a fence, written only once there is
    // something to protect (a reserved transaction, a state-changing call), so a plain send writes
    // nothing; its transaction is reserved under the invocation's hold, which the requester withdraws
    // when it gives up, even if this worker dies before the fence says what it holds.
    const abandonable = options.abandonable === true ? request.invocation_id : undefined;
    const fence = abandonable === undefined ? undefined : invocationFences(deps.store, () => deps.clock.now()).of(abandonable);
    const reservation = await deps.licence.authorize({
      provider_id: model.provider.id,
      ...(request.workflow_type === undefined ? {} : { workflow_type: request.workflow_type }),
      ...(abandonable === undefined ? {} : { hold: invocationHold(abandonable, deps.clock.now()) }),
    });
    try {
      if (reservation.transaction !== null) deps.faults?.reach('invocation.transaction_reserved');
      if (fence !== undefined && typeof reservation.transaction === 'string') await fence.reserved(reservation.transaction);
      const toolOptions = fence === undefined ? options : { ...options, fence };
      const tools = deps.tools === undefined ? null : await deps.tools.toolsFor(agent, { request, options: toolOptions, signal, competencies });
      const loop = await runToolLoop({
        provider: model.provider,
        request: { model: model.model, messages },
        tools: tools?.bindings ?? [],
        signal,
        clock: deps.clock,
        ...(options.onToken === undefined ? {} : { onToken: options.onToken }),
      }).catch(async (error: unknown) => {
        await gateway.failed(signal.aborted);
        throw error;
      });
      // A re-run whose answer would not account for a write an earlier execution made is in doubt.
      try {
        tools?.finish();
      } catch (error) {
        await gateway.failed(false);
        throw error;
      }
      // The gateway's closing writes (hydrated entry, traffic row) go alongside the licence commit:
      // one group commit of the embedded store instead of two. completed() never rejects.
      const completing = gateway.completed();
      const cost = costOf(deps.prices(model.provider.id), loop);
      const result: InvocationOutcome = {
        content: loop.content,
        tokens_used: loop.tokens_used,
        duration_ms: Math.max(0, deps.clock.now().getTime() - startedMs),
        correlation_id: request.correlation_id,
        source: request.source,
        tool_calls: loop.tool_calls,
        usage: { input_tokens: loop.usage.input_tokens, output_tokens: loop.usage.output_tokens },
        pii_tokenized: gateway.piiTokenized(),
      };
      try {
        // An answer its caller cannot receive is not charged (issue "Hardening" 2).
        options.checkDeliverable?.(result);
        if (signal.aborted) throw signal.reason;
        await options.beforeCommit?.();
        if (signal.aborted) throw signal.reason;
        // The answer goes with the fence: a requester that loses this worker from here on answers it.
        await fence?.committing(result);
        await reservation.commit({ cost_usd: cost });
      } catch (error) {
        await completing;
        throw error;
      }
      return { result, model, loop, cost, gatewaySettled: completing };
    } catch (error) {
      const how = fence === undefined ? 'release' : await fence.releasing().catch(() => 'release' as const);
      if (how === 'disown') reservation.disown();
      else await reservation.release();
      throw error;
    }
  }

  /** The privacy gateway's session for this model request; without a gateway, the default model as it is. */
  async function openGateway(agent: AgentRecord, request: InvocationRequest, messages: ChatMessage[]): Promise<GatewaySession> {
    if (deps.gateway === undefined) {
      const model = deps.models.resolve();
      return { model, piiTokenized: () => false, completed: async () => undefined, failed: async () => undefined };
    }
    return deps.gateway.open({
      messages,
      agent_id: agent.id,
      correlation_id: request.correlation_id,
      ...(request.caller === undefined ? {} : { identity: request.caller }),
      ...(request.caller_role === undefined ? {} : { role: request.caller_role }),
    });
  }

  /** The model's messages, and the competencies read for the system prompt (the tools come from them too). */
  async function conversation(agent: AgentRecord, message: string, stateless: boolean): Promise<{ messages: ChatMessage[]; competencies: EquippedCompetency[] }> {
    const competencies = await loadAgentCompetencies(deps.store, agent);
    const system = composeSystemPrompt(agent, competencies);
    const history = stateless ? [] : await deps.sessions.history(agent.id, deps.settings().session_max_bytes);
    const messages: ChatMessage[] = [
      ...(system === '' ? [] : [{ role: 'system' as const, content: system }]),
      ...history.map((turn) => ({ role: turn.role, content: turn.content })),
      { role: 'user', content: message },
    ];
    return { messages, competencies };
  }

  return { answer };
}

/** USD of a call from the provider's prices per million tokens (0 when unpriced). */
function costOf(prices: ProviderPrices | undefined, loop: ToolLoopResult): number {
  const input = prices?.input_usd_per_mtok ?? 0;
  const output = prices?.output_usd_per_mtok ?? 0;
  return (loop.usage.input_tokens * input + loop.usage.output_tokens * output) / 1_000_000;
}
