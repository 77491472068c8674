import { Durables, Streams, Subjects, type AgentInvokeReply, type AgentInvokeRequest, type PlatformEvent } from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';
import { Errors, type TriggerInvocation, type TriggerMatcher } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';

export interface TriggerConsumerDeps {
  bus: Bus;
  matcher: TriggerMatcher;
  logger: Logger;
  /** Events handled at once by this worker (each may wait for the invocations it fired). */
  concurrency: number;
  /** How long a delivery may stay unacknowledged: longer than an invocation may run. */
  ackWaitMs: number;
}

/** Redeliveries of an event whose matching failed on I/O (the store was unreachable). */
const MAX_DELIVER = 10;
const BACKOFF_MS = [500, 1_000, 2_000, 5_000];

/**
 * Consumes `platform.events` under the durable `trigger-matchers`, shared by every agent worker
 * (and the all-in-one), so each event is matched by one of them. Redelivery is harmless: each
 * (trigger, event) pair is claimed in the store before its agent is invoked (trigger-matcher.ts),
 * so a redelivered event, or one seen by two consumers, fires a trigger once.
 */
export async function consumeTriggerEvents(deps: TriggerConsumerDeps): Promise<Subscription> {
  return deps.bus.consume<PlatformEvent>(
    Streams.platformEvents,
    {
      durable: Durables.triggerMatchers,
      maxDeliver: MAX_DELIVER,
      backoffMs: BACKOFF_MS,
      ackWaitMs: deps.ackWaitMs,
      concurrency: deps.concurrency,
      onDeadLetter: (envelope, error) => deps.logger.error({ err: error, event_id: envelope.id }, 'a platform event could not be matched against the triggers; dropped'),
    },
    async (envelope) => {
      const event = envelope.data;
      if (typeof event !== 'object' || event === null || typeof event.kind !== 'string' || typeof event.id !== 'string') {
        deps.logger.error({ message_id: envelope.id }, 'platform.events message without a valid PlatformEvent; dropped');
        return;
      }
      try {
        await deps.matcher.handle({ ...event, data: event.data ?? {} });
      } catch (error) {
        throw Errors.unavailable('the trigger store', error);
      }
    },
  );
}

/** The identity trigger fires invoke as: its own idempotency scope. */
export const TRIGGER_CALLER = 'system:triggers';

/** A trigger's invocation sent to the agent workers (`agents.invoke`), like any other invocation. */
export function busTriggerInvoker(bus: Bus, timeoutMs: () => number): (invocation: TriggerInvocation) => Promise<void> {
  return async (invocation) => {
    await bus.request<AgentInvokeRequest, AgentInvokeReply>(
      Subjects.agentInvoke,
      { ...invocation, caller: TRIGGER_CALLER },
      { timeoutMs: timeoutMs() },
    );
  };
}
