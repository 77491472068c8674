import { isScheduleFire, Queues, Subjects, type AgentInvokeReply, type AgentInvokeRequest, type ScheduleFire } from '@agent-platform/contracts';
import { BusError, type Bus } from '@agent-platform/bus';
import { fireReason, type EventPublisher, type FireDecision, type ScheduleFiring } from '@agent-platform/domain';
import { inSpan, withCorrelation, type Logger } from '@agent-platform/observability';
import type { Job, Queue } from '@agent-platform/queue';
import type { ScheduleMetrics } from '../schedule-metrics.ts';

/** How a failed fire is retried: `attempts` in total, waiting `backoffMs * 2^(n-1)` after failure n. */
export interface FireRetry {
  attempts: number;
  backoffMs: number;
}

export interface FireHandlerDeps {
  queue: Queue;
  bus: Bus;
  logger: Logger;
  /** The domain's side of each slot: claim, catch-up, overlap, refusals, the fire log. */
  firing: ScheduleFiring;
  /** How long to wait for the agent worker's answer (the invocation timeout plus a grace). */
  requestTimeoutMs: () => number;
  /** `[schedules] fire_attempts` and `fire_backoff_ms`, read per fire (a reload applies to the next). */
  retry: () => FireRetry;
  metrics: ScheduleMetrics;
  /** This scheduler process, `host:pid`: kept on the slots it takes (operators, the fleet test). */
  identity: string;
  /** Where `schedule.fired` and `schedule.missed` go (docs/events.md). */
  events?: EventPublisher;
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

/**
 * How long a fire holds off the next slots of its job (overlap policy `skip`) without a heartbeat:
 * renewed every third of it while the invocation runs, so a scheduler killed mid-fire blocks its
 * job for at most this long.
 */
export const FIRE_LEASE_MS = 30_000;

/** The idempotency key (and correlation id) of one slot: the same in every process, on every attempt. */
export function fireKey(scheduleId: string, slotAt: string): string {
  return `cron:${scheduleId}:${slotAt}`;
}

/** A failure as the fire log shows it: `<category>: <message>`. */
function reasonOf(error: unknown): string {
  if (error instanceof BusError) {
    return error.code === 'remote' && error.remote !== undefined ? fireReason(error.remote.category, error.remote.message) : fireReason(`bus ${error.code}`, error.message);
  }
  return fireReason('Internal', error instanceof Error ? error.message : String(error));
}

/**
 * A `schedules` job. The domain decides what the slot becomes (`ScheduleFiring.begin`: fire it,
 * or record why not); a fire invokes the agent on `agents.invoke` with a `Cron` source and the
 * key `cron:<schedule id>:<slot time>`. The queue fires each slot once across scheduler
 * processes, the slot's claim in the store makes a second delivery a recorded `duplicate`, and
 * the key makes any repeat that still gets through (a stalled job run again) answer
 * DuplicateInvocation without running the agent again.
 *
 * A slot job has one attempt (the queue's scheduler semantics), so its first retryable failure
 * hands the slot to a retry job of our own (same queue, deterministic id, delayed by `backoffMs`);
 * a retry job that fails throws, and the queue retries it with exponential backoff until
 * `attempts` in total were made. Refusals are recorded, not retried.
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
    const isRetry = job.scheduler_id === undefined;
    const attempt = isRetry ? job.attempt + 1 : 1;
    const retry = deps.retry();
    const decision = await deps.firing.begin({ schedule_id: data.schedule_id, slot_at: slotAt, retry: isRetry, leaseMs: FIRE_LEASE_MS, by: deps.identity });
    deps.metrics.missed(decision.missed);
    if (decision.missed > 0) {
      // Keyed by the slot that noticed the gap: a redelivered slot does not count it twice.
      await deps.events?.emit('schedule.missed', {
        id: `schedule.missed:${data.schedule_id}:${slotAt}`,
        agent_id: data.agent_id,
        data: { schedule_id: data.schedule_id, slot_at: slotAt, missed: decision.missed },
      });
    }
    const context = { schedule_id: data.schedule_id, agent_id: data.agent_id, slot_at: slotAt, attempt };
    switch (decision.kind) {
      case 'orphan':
        // Its job was deleted (and the scheduler's removal lost, or raced by this slot).
        if (!isRetry) await deps.queue.removeScheduler(Queues.schedules, data.schedule_id);
        log.warn(context, 'schedule slot for a job that no longer exists; its scheduler was removed');
        return;
      case 'recorded':
        deps.metrics.outcome(decision.outcome);
        log.info({ ...context, outcome: decision.outcome, reason: decision.reason, missed: decision.missed }, `schedule slot not fired: ${decision.outcome}`);
        return;
      case 'fire':
        return fire(job, data, decision, attempt, retry);
    }
  };

  /**
   * The fire's span (docs/observability.md): schedule, slot and attempt, with the slot's key as
   * correlation id; the worker's invocation continues it over `agents.invoke`.
   */
  function fire(job: Job<unknown>, data: ScheduleFire, decision: Extract<FireDecision, { kind: 'fire' }>, attempt: number, retry: FireRetry): Promise<void> {
    const key = fireKey(data.schedule_id, decision.slot_at);
    const attributes = { 'schedule.id': data.schedule_id, 'schedule.slot_at': decision.slot_at, 'schedule.attempt': attempt, 'gen_ai.agent.id': decision.agent_id };
    return inSpan('schedule.fire', { role: 'producer', attributes }, () => withCorrelation(key, () => fireOnce(job, data, decision, attempt, retry, key)));
  }

  async function fireOnce(
    job: Job<unknown>,
    data: ScheduleFire,
    decision: Extract<FireDecision, { kind: 'fire' }>,
    attempt: number,
    retry: FireRetry,
    key: string,
  ): Promise<void> {
    const context = { schedule_id: data.schedule_id, agent_id: decision.agent_id, slot_at: decision.slot_at, attempt };
    if (attempt === 1) deps.metrics.lateness(decision.late_ms);
    const heartbeat = setInterval(() => {
      deps.firing.renew(data.schedule_id, decision.slot_at, FIRE_LEASE_MS).catch((err: unknown) => log.warn({ ...context, err }, 'could not renew a fire lease'));
    }, FIRE_LEASE_MS / 3);
    heartbeat.unref();
    try {
      const reply = await deps.bus.request<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, invocation(data.schedule_id, decision, key), {
        timeoutMs: deps.requestTimeoutMs(),
      }).finally(() => clearInterval(heartbeat));
      // A DuplicateInvocation answer to the slot's own claim means an earlier delivery of this
      // slot (a scheduler that died after sending it) ran the agent: the slot fired, once.
      const reason = reply.duplicate ? 'the agent had already run this slot under its key (an earlier delivery); it ran once' : null;
      await deps.firing.finish(data.schedule_id, decision.slot_at, { outcome: 'fired', reason, attempts: attempt });
      deps.metrics.outcome(reply.duplicate ? 'duplicate' : 'fired');
      // One event per slot, whatever the deliveries and attempts: keyed by schedule and slot.
      await deps.events?.emit('schedule.fired', {
        id: `schedule.fired:${data.schedule_id}:${decision.slot_at}`,
        agent_id: decision.agent_id,
        data: { schedule_id: data.schedule_id, slot_at: decision.slot_at, expression: decision.expression },
      });
      log.info({ ...context, late_ms: decision.late_ms, missed: decision.missed, duplicate: reply.duplicate }, reply.duplicate ? 'schedule slot had already fired' : 'schedule fired');
    } catch (error) {
      const reason = reasonOf(error);
      if (!isRetryableFire(error)) {
        await deps.firing.finish(data.schedule_id, decision.slot_at, { outcome: 'refused', reason, attempts: attempt });
        deps.metrics.outcome('refused');
        log.warn({ ...context, err: error }, 'schedule fire refused; recorded, not retried');
        return;
      }
      await retryLater(deps, log, job, data, decision.slot_at, key, error, reason, { context, attempt, retry });
    }
  }
}

/** What a failed attempt of a fire was, and what it leaves. */
interface FailedAttempt {
  context: object;
  attempt: number;
  retry: FireRetry;
  /** The attempt was lost with its scheduler (the queue's `onLost`): nothing to throw to. */
  lost?: boolean;
}

/**
 * A retryable failure of a fire's attempt: the slot is failed when it was the last of `attempts`,
 * or retried (a retry job of our own for a slot job; the queue's retry for a retry job).
 */
async function retryLater(
  deps: FireHandlerDeps,
  log: Logger,
  job: Job<unknown>,
  data: ScheduleFire,
  slotAt: string,
  key: string,
  error: unknown,
  reason: string,
  at: FailedAttempt,
): Promise<void> {
  const { attempts, backoffMs } = at.retry;
  const isRetry = job.scheduler_id === undefined;
  const exhausted = isRetry ? job.attempt >= attempts - 1 : attempts <= 1;
  if (exhausted) {
    await deps.firing.finish(data.schedule_id, slotAt, { outcome: 'failed', reason, attempts: at.attempt });
    deps.metrics.outcome('failed');
    log.error({ ...at.context, err: error }, `schedule fire failed ${at.attempt} time(s); giving up on this slot`);
    // A retry job fails for good, and the queue keeps it with its error for inspection.
    if (isRetry && at.lost !== true) throw error;
    return;
  }
  // Held through the backoff: the next attempt renews it.
  await deps.firing.retrying(data.schedule_id, slotAt, at.attempt, reason, backoffMs * 2 ** (at.attempt - 1) + FIRE_LEASE_MS);
  deps.metrics.retried();
  if (isRetry) {
    log.warn({ ...at.context, err: error }, 'schedule fire failed; the queue retries it');
    throw error;
  }
  await deps.queue.add<ScheduleFire>(
    Queues.schedules,
    { ...data, slot_at: slotAt },
    { jobId: `retry:${key}`, delayMs: backoffMs, attempts: attempts - 1, backoffMs: backoffMs * 2 },
  );
  log.warn({ ...at.context, err: error, retry_in_ms: backoffMs }, 'schedule fire failed; retrying');
}

/**
 * The queue's `onLost` for `schedules`: a slot or retry job whose last queue attempt was lost with
 * its scheduler (SIGKILLed mid-fire). The lost attempt counts as a failed one: a slot job's is the
 * fire's first attempt, so the slot is retried by a retry job while `[schedules] fire_attempts`
 * allow (under the same key: the agent runs at most once); a retry job's was the fire's last, so
 * the slot is recorded `failed` (never left `running`).
 */
export function lostFireHandler(deps: FireHandlerDeps) {
  const log = deps.logger.child({ service: 'scheduler' });
  return async (job: Job<unknown>, lostReason: string): Promise<void> => {
    const data = job.data;
    const slotAt = job.slot_at ?? (isScheduleFire(data) ? data.slot_at : undefined);
    if (!isScheduleFire(data) || slotAt === undefined) return;
    const attempt = job.scheduler_id === undefined ? job.attempt + 1 : 1;
    const reason = fireReason('Internal', `attempt ${attempt} was lost with its scheduler: ${lostReason}`);
    const context = { schedule_id: data.schedule_id, agent_id: data.agent_id, slot_at: slotAt, attempt };
    await retryLater(deps, log, job, data, slotAt, fireKey(data.schedule_id, slotAt), new Error(reason), reason, {
      context,
      attempt,
      retry: deps.retry(),
      lost: true,
    });
  };
}

function invocation(scheduleId: string, decision: Extract<FireDecision, { kind: 'fire' }>, key: string): AgentInvokeRequest {
  return {
    agent_id: decision.agent_id,
    source: { Cron: { schedule_id: scheduleId, expression: decision.expression, scheduled_at: decision.slot_at } },
    message: decision.message,
    correlation_id: key,
    idempotency_key: key,
    // Its own idempotency scope: no API caller can collide with (or read) a slot's key.
    caller: SCHEDULER_CALLER,
  };
}

/** The identity cron fires invoke as. */
export const SCHEDULER_CALLER = 'system:scheduler';
