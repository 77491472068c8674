import { isScheduleFire, Queues, Subjects, type AgentInvokeReply, type AgentInvokeRequest, type ScheduleFire } from '@agent-platform/contracts';
import { BusError, type Bus } from '@agent-platform/bus';
import type { Clock } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Job, Queue } from '@agent-platform/queue';

/** How a failed fire is retried: `attempts` in total, waiting `backoffMs * 2^(n-1)` after failure n. */
export interface FireRetry {
  attempts: number;
  backoffMs: number;
}

export interface FireHandlerDeps {
  queue: Queue;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  /** How long to wait for the agent worker's answer (the invocation timeout plus a grace). */
  requestTimeoutMs: () => number;
  retry: FireRetry;
}

/**
 * Remote categories worth another attempt: the worker or a store it needs was busy or down. A
 * refusal (unknown or Suspended agent, licence, validation) would be refused again.
 */
const RETRYABLE_CATEGORIES = new Set(['Timeout', 'RateLimited', 'Internal', 'InternalError']);

/** Whether a failed fire may succeed later: transport failures always, worker errors by category. */
export function isRetryableFire(error: unknown): boolean {
  if (!(error instanceof BusError)) return true;
  if (error.code === 'remote') return RETRYABLE_CATEGORIES.has(error.remote?.category ?? 'Internal');
  return error.code !== 'aborted';
}

/** The idempotency key (and correlation id) of one slot: the same in every process, on every attempt. */
export function fireKey(scheduleId: string, slotAt: string): string {
  return `cron:${scheduleId}:${slotAt}`;
}

/**
 * A `schedules` job: invokes the agent on `agents.invoke` with a `Cron` source and the key
 * `cron:<schedule id>:<slot time>`. The queue fires each slot once across scheduler processes;
 * the key makes any repeat (a stalled job run again, a retry after a lost reply) answer
 * DuplicateInvocation without running the agent again, and that counts as success.
 *
 * A slot job has one attempt (the queue's scheduler semantics), so its first retryable failure
 * hands the slot to a retry job of our own (same queue, deterministic id, delayed by `backoffMs`);
 * a retry job that fails throws, and the queue retries it with exponential backoff until
 * `attempts` in total were made. Non-retryable refusals are logged, not retried.
 */
export function fireHandler(deps: FireHandlerDeps) {
  const log = deps.logger.child({ service: 'scheduler' });
  return async (job: Job<unknown>): Promise<void> => {
    const data = job.data;
    const slotAt = job.slot_at ?? (isScheduleFire(data) ? data.slot_at : undefined);
    if (!isScheduleFire(data) || slotAt === undefined) {
      // Retrying cannot repair a payload: drop it loudly.
      log.error({ job_id: job.id, scheduler_id: job.scheduler_id }, 'schedules job without a valid ScheduleFire payload or slot; dropped');
      return;
    }
    const key = fireKey(data.schedule_id, slotAt);
    const context = { schedule_id: data.schedule_id, agent_id: data.agent_id, slot_at: slotAt, attempt: attemptOf(job) };
    try {
      const reply = await deps.bus.request<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, invocation(data, slotAt, key), {
        timeoutMs: deps.requestTimeoutMs(),
      });
      const lateMs = deps.clock.now().getTime() - Date.parse(slotAt);
      log.info({ ...context, duplicate: reply.duplicate, late_ms: lateMs }, reply.duplicate ? 'schedule slot had already fired' : 'schedule fired');
    } catch (error) {
      if (!isRetryableFire(error)) {
        log.warn({ ...context, err: error }, 'schedule fire refused; not retried');
        return;
      }
      await retryLater(job, data, slotAt, key, error, context);
    }
  };

  async function retryLater(job: Job<unknown>, data: ScheduleFire, slotAt: string, key: string, error: unknown, context: object): Promise<void> {
    const { attempts, backoffMs } = deps.retry;
    if (job.scheduler_id === undefined) {
      if (job.attempt >= attempts - 1) log.error({ ...context, err: error }, `schedule fire failed ${attempts} times; giving up on this slot`);
      else log.warn({ ...context, err: error }, 'schedule fire failed; the queue retries it');
      throw error;
    }
    if (attempts <= 1) {
      log.error({ ...context, err: error }, 'schedule fire failed; retries are off');
      return;
    }
    await deps.queue.add<ScheduleFire>(
      Queues.schedules,
      { ...data, slot_at: slotAt },
      { jobId: `retry:${key}`, delayMs: backoffMs, attempts: attempts - 1, backoffMs: backoffMs * 2 },
    );
    log.warn({ ...context, err: error, retry_in_ms: backoffMs }, 'schedule fire failed; retrying');
  }
}

/** 1 for the slot job, then 2.. for the attempts of its retry job. */
function attemptOf(job: Job<unknown>): number {
  return job.scheduler_id === undefined ? job.attempt + 1 : 1;
}

function invocation(data: ScheduleFire, slotAt: string, key: string): AgentInvokeRequest {
  return {
    agent_id: data.agent_id,
    source: { Cron: { schedule_id: data.schedule_id, expression: data.expression, scheduled_at: slotAt } },
    message: data.message,
    correlation_id: key,
    idempotency_key: key,
    // Its own idempotency scope: no API caller can collide with (or read) a slot's key.
    caller: SCHEDULER_CALLER,
  };
}

/** The identity cron fires invoke as. */
export const SCHEDULER_CALLER = 'system:scheduler';
