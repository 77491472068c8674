import { assertAgentRunning } from '../agents/agent-lifecycle.ts';
import type { AgentRecord } from '../agents/agent-record.ts';
import { Errors } from '../errors/errors.ts';
import type { InvocationOutcome } from '@agent-platform/contracts';
import { createIdempotencyKeys, requestHash, type OwnedClaim } from './idempotency.ts';
import type { InvocationOptions, InvocationRequest, InvocationServiceDeps } from './invocation-types.ts';
import { assertMessageWithin } from './message-size.ts';
import { createRateLimiter } from './rate-limiter.ts';

/** Where an invocation spent its time before it ran, for the message of its Timeout. */
export interface SlotWait {
  startedMs: number | null;
  endedMs: number | null;
}

/** An invocation allowed to run: its agent, its idempotency claim (if keyed) and its slot. */
export interface Admitted {
  kind: 'admitted';
  agent: AgentRecord;
  claim: OwnedClaim | null;
  releaseSlot: () => void;
}

/** A repeat of an idempotency key already processed: the recorded result, nothing runs. */
export interface Repeated {
  kind: 'duplicate';
  result: InvocationOutcome;
}

export interface InvocationAdmission {
  /**
   * The checks in the contract's order (docs/invocation.md): message size, agent exists, agent
   * Running (D9), rate limit, idempotency key, a free slot on this worker. A failed check throws
   * and leaves nothing claimed.
   */
  admit(request: InvocationRequest, controller: AbortController, options: InvocationOptions, timeoutSecs: number, slotWait: SlotWait): Promise<Admitted | Repeated>;
  /** An idempotency record was settled somewhere: wakes the repeats waiting here. */
  settled(recordId: string): void;
  /** The agent's rate limit, taken ahead by a caller (InvocationOptions.rateLimitTaken). */
  takeRateLimit(agentId: string): Promise<void>;
}

type AdmissionDeps = Pick<InvocationServiceDeps, 'store' | 'clock' | 'agents' | 'settings' | 'announceSettled'> & {
  warn: NonNullable<InvocationServiceDeps['warn']>;
};

/** The idempotency scope of requests that name no caller (older api nodes). */
const UNSCOPED = 'unscoped';

export function createInvocationAdmission(deps: AdmissionDeps): InvocationAdmission {
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

  async function admit(
    request: InvocationRequest,
    controller: AbortController,
    options: InvocationOptions,
    timeoutSecs: number,
    slotWait: SlotWait,
  ): Promise<Admitted | Repeated> {
    const { signal } = controller;
    assertMessageWithin(request.message, deps.settings().max_message_bytes);
    const agent = await deps.agents.get(request.agent_id);
    if (agent === null) throw Errors.notFound('agent', request.agent_id);
    assertAgentRunning(agent);
    await (options.rateLimitTaken ?? limiter.take(agent.id));
    let claim: OwnedClaim | null = null;
    if (request.idempotency_key !== undefined) {
      const claimed = await keys.claim(
        { agentId: agent.id, scope: request.caller ?? UNSCOPED, key: request.idempotency_key, requestHash: requestHash(request) },
        { waitMs: timeoutSecs * 1000, signal },
      );
      if (claimed.kind === 'duplicate') return { kind: 'duplicate', result: claimed.result };
      claim = claimed;
      // A claim lost while running (another caller may own the key now) stops this invocation.
      const lost = claimed.lost;
      if (lost.aborted) controller.abort(lost.reason);
      else lost.addEventListener('abort', () => controller.abort(lost.reason), { once: true });
    }
    let releaseSlot = (): void => undefined;
    if (options.acquireSlot !== undefined) {
      slotWait.startedMs = deps.clock.now().getTime();
      try {
        releaseSlot = await options.acquireSlot(signal);
      } catch (error) {
        await claim?.release().catch((err: unknown) => deps.warn({ err, agent_id: agent.id }, 'could not release an idempotency key'));
        throw error;
      }
      slotWait.endedMs = deps.clock.now().getTime();
    }
    return { kind: 'admitted', agent, claim, releaseSlot };
  }

  return { admit, settled: (recordId) => keys.settled(recordId), takeRateLimit: (agentId) => limiter.take(agentId) };
}
