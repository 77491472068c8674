import type { AgentRecord } from '../agents/agent-record.ts';
import { Errors } from '../errors/errors.ts';
import { createAbortRegistry } from './abort-registry.ts';
import type { OwnedClaim } from './idempotency.ts';
import { createInvocationAdmission, type SlotWait } from './invocation-admission.ts';
import { createInvocationBookkeeping } from './invocation-bookkeeping.ts';
import { createInvocationExecutor } from './invocation-execution.ts';
import { clip } from '../events/event-publisher.ts';
import { sourceName } from './invocation-source.ts';
import { isInDoubt } from '../tools/journaled-calls.ts';
import type {
  InvocationExecution,
  InvocationOptions,
  InvocationRequest,
  InvocationService,
  InvocationServiceDeps,
} from './invocation-types.ts';

export type * from './invocation-types.ts';
export * from './invocation-fences.ts';

/**
 * How long past the invocation timeout a cancel that overtook its invocation is remembered: the
 * invocation cannot start later than that.
 */
const LEASE_MARGIN_MS = 5_000;

/**
 * Runs agent invocations: this file owns the invocation's lifetime (timeout, cancel, suspend) and
 * the order of the three concerns. Admission (invocation-admission.ts: size, agent, state, rate
 * limit, idempotency key, slot), execution (invocation-execution.ts: licence, prompt, tools,
 * model) and bookkeeping (invocation-bookkeeping.ts: session, usage). Only a success that can be
 * delivered is remembered under its key, spends the transaction and is recorded as usage; any
 * failure, cancellation included, releases the key and the transaction (docs/invocation.md).
 */
export function createInvocationService(deps: InvocationServiceDeps): InvocationService {
  const warn = deps.warn ?? (() => undefined);
  const aborts = createAbortRegistry({ rememberMs: () => deps.settings().invocation_timeout_secs * 1000 + LEASE_MARGIN_MS });
  const admission = createInvocationAdmission({ ...deps, warn });
  const executor = createInvocationExecutor(deps);
  const bookkeeping = createInvocationBookkeeping({ ...deps, warn });
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
      const admitted = await admission.admit(request, controller, options, timeoutSecs, slotWait);
      if (admitted.kind === 'duplicate') return { result: admitted.result, duplicate: true };
      try {
        return await runAdmitted(admitted.agent, request, controller.signal, options, admitted.claim);
      } finally {
        admitted.releaseSlot();
      }
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

  async function runAdmitted(
    agent: AgentRecord,
    request: InvocationRequest,
    signal: AbortSignal,
    options: InvocationOptions,
    claim: OwnedClaim | null,
  ): Promise<InvocationExecution> {
    const source = sourceName(request.source);
    // Counted beside the answer's first writes rather than before them: one group commit fewer on
    // the way to the model (docs/performance.md "Store operations per route").
    const receiving = deps.stats.received(agent.id, source).catch((err: unknown) => warn({ err, agent_id: agent.id }, 'could not count a received invocation'));
    const started = nowMs();
    try {
      // A workflow step brings its run's journal; an invocation with a key uses its claim's.
      const journal = options.toolJournal ?? claim?.journal;
      const answered = await executor.answer(agent, request, signal, journal === undefined ? options : { ...options, toolJournal: journal }, started);
      // The key's result, gateway record, session, usage and stats are submitted in the same turn:
      // the embedded store commits them in one transaction (one sync), so a worker killed around
      // it leaves either the settled key with its usage event or neither (a pending key, which a
      // retry takes over and runs, recorded once). On PostgreSQL they are separate statements
      // (docs/invocation.md "A worker that dies").
      await Promise.all([
        // The caller keeps the promise of its own writes and awaits it (a workflow step's checkpoint).
        options.onAnswered?.(answered.result).catch(() => undefined),
        claim?.complete(answered.result).catch((err: unknown) => warn({ err, agent_id: agent.id }, 'could not record the idempotency result')),
        answered.gatewaySettled,
        receiving,
        bookkeeping.answered(agent, request, answered, options.stateless === true),
        deps.stats.finished(agent.id, source, { ok: true, duration_ms: answered.result.duration_ms }),
      ]);
      void deps.events?.emit('invocation.completed', {
        ...eventIdOf(request, 'completed'),
        agent_id: agent.id,
        data: { ...invocationFields(request, answered.result.duration_ms), tokens_used: answered.result.tokens_used, content: clip(answered.result.content) },
      });
      return { result: answered.result, duplicate: false };
    } catch (raw) {
      const error: unknown = signal.aborted ? signal.reason : raw;
      // A tool call in doubt is the key's answer from now on: no retry of the request may write again.
      const settling = isInDoubt(error) ? claim?.fail(error) : claim?.release();
      await settling?.catch((err: unknown) => warn({ err, agent_id: agent.id }, 'could not settle an idempotency key'));
      const durationMs = nowMs() - started;
      await receiving;
      await deps.stats.finished(agent.id, source, { ok: false, duration_ms: durationMs });
      void deps.events?.emit('invocation.failed', {
        ...eventIdOf(request, 'failed'),
        agent_id: agent.id,
        data: { ...invocationFields(request, durationMs), ...categoryOf(error) },
      });
      throw error;
    }
  }

  return {
    execute,
    abortAgent: (agentId, reason = 'suspended') =>
      aborts.abortAgent(
        agentId,
        Errors.invalidState(`invocation aborted: agent '${agentId}' was ${reason}`, { agent_id: agentId, state: 'Suspended', reason }),
      ),
    cancel: (invocationId, reason = 'its caller went away') => aborts.cancel(invocationId, Errors.invocationCancelled(reason)),
    idempotencySettled: (recordId) => admission.settled(recordId),
    takeRateLimit: (agentId) => admission.takeRateLimit(agentId),
  };
}

/** The fields both invocation events carry; `trigger_chain` when a trigger started it (docs/events.md "Loops"). */
function invocationFields(request: InvocationRequest, durationMs: number) {
  const trigger = typeof request.source === 'object' ? (request.source['Trigger'] as { chain?: unknown } | undefined) : undefined;
  const chain = Array.isArray(trigger?.chain) ? trigger.chain.filter((id): id is string => typeof id === 'string') : undefined;
  return {
    invocation_id: request.invocation_id ?? null,
    correlation_id: request.correlation_id,
    source: sourceName(request.source),
    duration_ms: Math.max(0, Math.round(durationMs)),
    ...(chain === undefined ? {} : { trigger_chain: chain }),
  };
}

/** A repeat of the same invocation (one `invocation_id`) emits under the same event id. */
function eventIdOf(request: InvocationRequest, outcome: string): { id?: string } {
  return request.invocation_id === undefined ? {} : { id: `invocation.${outcome}:${request.invocation_id}` };
}

function categoryOf(error: unknown): { category: string; message: string } {
  if (typeof error === 'object' && error !== null) {
    const e = error as { category?: unknown; message?: unknown };
    return { category: typeof e.category === 'string' ? e.category : 'Internal', message: clip(typeof e.message === 'string' ? e.message : 'internal error', 1000) };
  }
  return { category: 'Internal', message: 'internal error' };
}
