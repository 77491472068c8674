import type { InvocationOutcome, InvocationSourceWire, PlatformConfig } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { assertAgentRunning } from '../agents/agent-lifecycle.ts';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { AgentStats } from '../agents/agent-stats.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import type { SessionStore } from '../agents/session-store.ts';
import { composeSystemPrompt, loadAgentCompetencies } from '../agents/system-prompt.ts';
import { Errors } from '../errors/errors.ts';
import type { LicenceGate } from '../licence/licence-gate.ts';
import type { ChatMessage } from '../models/model-provider.ts';
import type { ModelRegistry, ResolvedModel } from '../models/model-registry.ts';
import { runToolLoop, type ToolLoopResult } from '../models/tool-loop.ts';
import type { Clock } from '../time/clock.ts';
import { createAbortRegistry } from './abort-registry.ts';
import { createIdempotencyKeys, requestHash, type OwnedClaim } from './idempotency.ts';
import { sourceName } from './invocation-source.ts';
import { assertMessageWithin } from './message-size.ts';
import { createRateLimiter } from './rate-limiter.ts';
import { recordUsageEvent } from './usage-events.ts';
import { valueClassOf } from './value-class.ts';

/** One invocation to run: spec InvocationContext plus the agent it is aimed at. */
export interface InvocationRequest {
  agent_id: string;
  source: InvocationSourceWire;
  message: string;
  idempotency_key?: string;
  correlation_id: string;
  workflow_type?: string;
  /** The caller's identity; idempotency keys are scoped by it (absent: the shared scope `unscoped`). */
  caller?: string;
  /** Names this invocation for `cancel` (a UUID the api node makes per request). */
  invocation_id?: string;
}

export interface InvocationOptions {
  /** Aborting cancels the invocation (the caller went away); it fails with the signal's reason. */
  signal?: AbortSignal;
  /** Receives the reply text as the provider produces it. */
  onToken?: (text: string) => void;
  /**
   * Waits for a place to run (the agent worker's `[agents] worker_concurrency` slots) and returns
   * its release. Called once, after the idempotency key is claimed, so a repeat waiting for the
   * key's owner holds no place; the wait counts within the invocation timeout.
   */
  acquireSlot?: (signal: AbortSignal) => Promise<() => void>;
  /**
   * Throws when the result could not reach the caller (too large for the bus). Called before the
   * licence is charged and the result remembered, so an undelivered answer costs nothing.
   */
  checkDeliverable?: (result: InvocationOutcome) => void;
  /**
   * The longest this invocation may run, when shorter than `[agents] invocation_timeout_secs`
   * (a workflow step's `timeout_secs`, the legacy step's `timeout`).
   */
  timeoutSecs?: number;
  /**
   * Leaves the agent's canonical session alone: the model sees only the system prompt and this
   * message, and nothing is appended. Workflow steps run so, so a step's output depends on its
   * input alone and a step re-executed after a crash sees what the first execution saw.
   */
  stateless?: boolean;
}

export interface InvocationExecution {
  result: InvocationOutcome;
  /** True when the idempotency key was already processed: `result` is the one recorded then. */
  duplicate: boolean;
}

/** Runs agent invocations (send, invoke, chat, and later cron fires and workflow steps). */
export interface InvocationService {
  execute(request: InvocationRequest, options?: InvocationOptions): Promise<InvocationExecution>;
  /** Aborts the agent's invocations running in this process (suspend); returns how many. */
  abortAgent(agentId: string, reason?: string): number;
  /**
   * Cancels the invocation with that `invocation_id` if it runs here (true), else remembers the
   * cancel for a while in case the invocation is still on its way (false). It fails, and nothing
   * is charged or remembered under its idempotency key.
   */
  cancel(invocationId: string, reason?: string): boolean;
  /** An idempotency record was settled somewhere (a bus notification): wakes the repeats waiting here. */
  idempotencySettled(recordId: string): void;
}

/** USD per million tokens of a provider; absent prices count as 0 (the `local` provider). */
export interface ProviderPrices {
  input_usd_per_mtok?: number | undefined;
  output_usd_per_mtok?: number | undefined;
}

export interface InvocationServiceDeps {
  store: Store;
  clock: Clock;
  agents: Pick<AgentStore, 'get'>;
  sessions: SessionStore;
  stats: AgentStats;
  models: ModelRegistry;
  licence: LicenceGate;
  /** `[agents]` of the running config, read per invocation so a reload applies to the next one. */
  settings: () => PlatformConfig['agents'];
  prices: (providerId: string) => ProviderPrices | undefined;
  /** Bookkeeping after a successful answer that failed (session, usage): logged, never raised. */
  warn?: (context: Record<string, unknown>, message: string) => void;
  /** Tells every process an idempotency record was settled (the worker notifies the bus). */
  announceSettled?: (recordId: string) => void;
}

/**
 * How long past the invocation timeout a cancel that overtook its invocation is remembered: the
 * invocation cannot start later than that.
 */
const LEASE_MARGIN_MS = 5_000;

/** Where an invocation spent its time before it ran, for the message of its Timeout. */
interface SlotWait {
  startedMs: number | null;
  endedMs: number | null;
}

/**
 * The order of checks is the contract (docs/invocation.md): message size (SizeLimitExceeded),
 * agent exists (404), agent Running (D9, InvalidState), rate limit (429), idempotency key (a
 * repeat answers the recorded result and runs nothing; a different request under the key is
 * 409), a free slot on this worker, then the licence gate before any provider call (D3, D6: a
 * refusal is 403 and holds no transaction), then the model. Only a success that can be delivered
 * is remembered under its key, spends the transaction and is recorded as usage; any failure,
 * cancellation included, releases the key and the transaction.
 */
export function createInvocationService(deps: InvocationServiceDeps): InvocationService {
  const aborts = createAbortRegistry({ rememberMs: () => deps.settings().invocation_timeout_secs * 1000 + LEASE_MARGIN_MS });
  const limiter = createRateLimiter({
    counters: deps.store.counters,
    clock: deps.clock,
    limitPerMinute: () => deps.settings().rate_limit_per_minute,
  });
  const keys = createIdempotencyKeys({
    store: deps.store,
    clock: deps.clock,
    ttlHours: () => deps.settings().idempotency_ttl_hours,
    pendingLeaseMs: () => deps.settings().claim_lease_secs * 1000,
    ...(deps.announceSettled === undefined ? {} : { announce: deps.announceSettled }),
  });
  const warn = deps.warn ?? (() => undefined);
  const nowMs = (): number => deps.clock.now().getTime();

  async function execute(request: InvocationRequest, options: InvocationOptions = {}): Promise<InvocationExecution> {
    const timeoutSecs = Math.min(deps.settings().invocation_timeout_secs, options.timeoutSecs ?? Number.POSITIVE_INFINITY);
    const controller = new AbortController();
    const slotWait: SlotWait = { startedMs: null, endedMs: null };
    // Tracked before the agent is read: a suspend or cancel landing after that read still finds us.
    const untrack = aborts.track(request.agent_id, controller, request.invocation_id);
    const timer = setTimeout(() => controller.abort(timeoutError(request.agent_id, timeoutSecs, slotWait, timeoutSecs < deps.settings().invocation_timeout_secs)),
      timeoutSecs * 1000,
    );
    const outer = options.signal;
    const onOuterAbort = (): void => controller.abort(outer?.reason ?? Errors.invocationCancelled('its caller went away'));
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    try {
      if (controller.signal.aborted) throw controller.signal.reason;
      return await run(request, controller, options, timeoutSecs, slotWait);
    } catch (error) {
      throw controller.signal.aborted ? controller.signal.reason : error;
    } finally {
      clearTimeout(timer);
      untrack();
      outer?.removeEventListener('abort', onOuterAbort);
    }
  }

  function timeoutError(agentId: string, timeoutSecs: number, slotWait: SlotWait, own: boolean): Error {
    const limit = own ? 'its own timeout' : '[agents] invocation_timeout_secs';
    const base = `invocation of agent '${agentId}' exceeded ${timeoutSecs} s (${limit})`;
    if (slotWait.startedMs === null) return Errors.timeout(base);
    const waitedSecs = (((slotWait.endedMs ?? nowMs()) - slotWait.startedMs) / 1000).toFixed(1);
    return Errors.timeout(`${base}, ${waitedSecs} s of it waiting for a free slot on a busy agent worker ([agents] worker_concurrency)`);
  }

  async function run(
    request: InvocationRequest,
    controller: AbortController,
    options: InvocationOptions,
    timeoutSecs: number,
    slotWait: SlotWait,
  ): Promise<InvocationExecution> {
    const { signal } = controller;
    assertMessageWithin(request.message, deps.settings().max_message_bytes);
    const agent = await deps.agents.get(request.agent_id);
    if (agent === null) throw Errors.notFound('agent', request.agent_id);
    assertAgentRunning(agent);
    await limiter.take(agent.id);
    let claim: OwnedClaim | null = null;
    if (request.idempotency_key !== undefined) {
      const claimed = await keys.claim(
        { agentId: agent.id, scope: request.caller ?? UNSCOPED, key: request.idempotency_key, requestHash: requestHash(request) },
        { waitMs: timeoutSecs * 1000, signal },
      );
      if (claimed.kind === 'duplicate') return { result: claimed.result, duplicate: true };
      claim = claimed;
      // A claim lost while running (another caller may own the key now) stops this invocation.
      const lost = claimed.lost;
      if (lost.aborted) controller.abort(lost.reason);
      else lost.addEventListener('abort', () => controller.abort(lost.reason), { once: true });
    }
    let releaseSlot = (): void => undefined;
    if (options.acquireSlot !== undefined) {
      slotWait.startedMs = nowMs();
      try {
        releaseSlot = await options.acquireSlot(signal);
      } catch (error) {
        await claim?.release().catch((err: unknown) => warn({ err, agent_id: agent.id }, 'could not release an idempotency key'));
        throw error;
      }
      slotWait.endedMs = nowMs();
    }
    try {
      return await runClaimed(agent, request, signal, options, claim);
    } finally {
      releaseSlot();
    }
  }

  async function runClaimed(
    agent: AgentRecord,
    request: InvocationRequest,
    signal: AbortSignal,
    options: InvocationOptions,
    claim: OwnedClaim | null,
  ): Promise<InvocationExecution> {
    const source = sourceName(request.source);
    await deps.stats.received(agent.id, source);
    const started = nowMs();
    try {
      const answered = await answer(agent, request, signal, options, started);
      const { result } = answered;
      // The key is settled before the bookkeeping: a worker killed between the two writes then
      // loses one usage event, instead of leaving a pending key that a retry would run again
      // (no idempotency key may ever execute twice).
      await claim?.complete(result).catch((err: unknown) => warn({ err, agent_id: agent.id }, 'could not record the idempotency result'));
      await bookkeep(agent, request, answered, options.stateless === true);
      await deps.stats.finished(agent.id, source, { ok: true, duration_ms: result.duration_ms });
      return { result, duplicate: false };
    } catch (raw) {
      const error: unknown = signal.aborted ? signal.reason : raw;
      await claim?.release().catch((err: unknown) => warn({ err, agent_id: agent.id }, 'could not release an idempotency key'));
      await deps.stats.finished(agent.id, source, { ok: false, duration_ms: nowMs() - started });
      throw error;
    }
  }

  async function answer(
    agent: AgentRecord,
    request: InvocationRequest,
    signal: AbortSignal,
    options: InvocationOptions,
    started: number,
  ): Promise<Answered> {
    const model = deps.models.resolve();
    const reservation = await deps.licence.authorize({
      provider_id: model.provider.id,
      ...(request.workflow_type === undefined ? {} : { workflow_type: request.workflow_type }),
    });
    try {
      const messages = await conversation(agent, request.message, options.stateless === true);
      const loop = await runToolLoop({
        provider: model.provider,
        request: { model: model.model, messages },
        tools: [],
        signal,
        clock: deps.clock,
        ...(options.onToken === undefined ? {} : { onToken: options.onToken }),
      });
      const cost = costOf(deps.prices(model.provider.id), loop);
      const result: InvocationOutcome = {
        content: loop.content,
        tokens_used: loop.tokens_used,
        duration_ms: Math.max(0, nowMs() - started),
        correlation_id: request.correlation_id,
        source: request.source,
        tool_calls: loop.tool_calls,
        usage: { input_tokens: loop.usage.input_tokens, output_tokens: loop.usage.output_tokens },
      };
      // An answer its caller cannot receive is not charged (issue "Hardening" 2).
      options.checkDeliverable?.(result);
      if (signal.aborted) throw signal.reason;
      await reservation.commit({ cost_usd: cost });
      return { result, model, loop, cost };
    } catch (error) {
      await reservation.release();
      throw error;
    }
  }

  async function conversation(agent: AgentRecord, message: string, stateless: boolean): Promise<ChatMessage[]> {
    const system = composeSystemPrompt(agent, await loadAgentCompetencies(deps.store, agent));
    const history = stateless ? [] : await deps.sessions.history(agent.id, deps.settings().session_max_bytes);
    return [
      ...(system === '' ? [] : [{ role: 'system' as const, content: system }]),
      ...history.map((turn) => ({ role: turn.role, content: turn.content })),
      { role: 'user', content: message },
    ];
  }

  /** The answer is already paid for and correct: failing to record it must not fail the call. */
  async function bookkeep(agent: AgentRecord, request: InvocationRequest, { model, loop, cost }: Answered, stateless: boolean): Promise<void> {
    const at = deps.clock.now().toISOString();
    if (!stateless) {
      await deps.sessions
        .append(
          agent.id,
          [
            { role: 'user', content: request.message, at },
            { role: 'assistant', content: loop.content, at },
          ],
          deps.settings().session_max_turns,
          deps.settings().session_max_bytes,
        )
        .catch((err: unknown) => warn({ err, agent_id: agent.id }, 'could not append to the agent session'));
    }
    const workflowType = request.workflow_type ?? null;
    await recordUsageEvent(deps.store, {
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
    }).catch((err: unknown) => warn({ err, agent_id: agent.id }, 'could not record a usage event'));
  }

  return {
    execute,
    abortAgent: (agentId, reason = 'suspended') =>
      aborts.abortAgent(
        agentId,
        Errors.invalidState(`invocation aborted: agent '${agentId}' was ${reason}`, { agent_id: agentId, state: 'Suspended', reason }),
      ),
    cancel: (invocationId, reason = 'its caller went away') => aborts.cancel(invocationId, Errors.invocationCancelled(reason)),
    idempotencySettled: (recordId) => keys.settled(recordId),
  };
}

/** The idempotency scope of requests that name no caller (older api nodes). */
const UNSCOPED = 'unscoped';

/** A paid-for answer and what its bookkeeping (session, usage event) needs. */
interface Answered {
  result: InvocationOutcome;
  model: ResolvedModel;
  loop: ToolLoopResult;
  cost: number;
}

/** USD of a call from the provider's prices per million tokens (0 when unpriced). */
function costOf(prices: ProviderPrices | undefined, loop: ToolLoopResult): number {
  const input = prices?.input_usd_per_mtok ?? 0;
  const output = prices?.output_usd_per_mtok ?? 0;
  return (loop.usage.input_tokens * input + loop.usage.output_tokens * output) / 1_000_000;
}
