import { hostname } from 'node:os';
import { Queues } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import type { EventPublisher, ScheduleService } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Queue, Worker } from '@agent-platform/queue';
import { fireHandler, lostFireHandler, type FireHandlerDeps, type FireRetry } from './handlers/fire-handler.ts';
import { NO_SCHEDULE_METRICS, type ScheduleMetrics } from './schedule-metrics.ts';

export interface SchedulerDeps {
  queue: Queue;
  bus: Bus;
  logger: Logger;
  /** The jobs (store) and the firing protocol every scheduler process shares (libs/domain). */
  schedules: Pick<ScheduleService, 'firing' | 'reconcile'>;
  /** How long a fire waits for the agent worker; default 305 s (the default invocation timeout plus 5 s). */
  requestTimeoutMs?: () => number;
  /** Default: 5 attempts, 1 s backoff doubling (1, 2, 4, 8 s); composition reads `[schedules]`. */
  retry?: () => FireRetry;
  /** Fires running at once in this process; default 16 (one slow agent does not hold the others). */
  concurrency?: number;
  metrics?: ScheduleMetrics;
  /** Where `schedule.fired` and `schedule.missed` go (docs/events.md); absent: nowhere. */
  events?: EventPublisher;
}

export interface SchedulerService {
  name: string;
  start(): Promise<void>;
  /** Stops taking fires and waits for the running ones. */
  stop(): Promise<void>;
}

const DEFAULT_RETRY: FireRetry = { attempts: 5, backoffMs: 1_000 };
const DEFAULT_TIMEOUT_MS = 305_000;
const DEFAULT_CONCURRENCY = 16;

/**
 * The scheduler (STYLE §1): processes queue `schedules`, where every enabled job is a job
 * scheduler (the `ScheduleService` in libs/domain puts it there) and each slot becomes at most one
 * invocation on the bus (`fireHandler`). Any number of scheduler processes may share the queue:
 * the queue fires each slot once, the slot's claim in the store and its idempotency key make a
 * repeat harmless anyway. At start the queue is brought in line with the store (a job whose
 * registration was lost is registered again; a scheduler without an enabled job is removed).
 */
export function createSchedulerService(deps: SchedulerDeps): SchedulerService {
  const log = deps.logger.child({ service: 'scheduler' });
  let worker: Worker | null = null;
  return {
    name: 'scheduler',
    async start() {
      const reconciled = await deps.schedules.reconcile();
      const fireDeps: FireHandlerDeps = {
        queue: deps.queue,
        bus: deps.bus,
        logger: deps.logger,
        firing: deps.schedules.firing,
        requestTimeoutMs: deps.requestTimeoutMs ?? (() => DEFAULT_TIMEOUT_MS),
        retry: deps.retry ?? (() => DEFAULT_RETRY),
        metrics: deps.metrics ?? NO_SCHEDULE_METRICS,
        identity: `${hostname()}:${process.pid}`,
        ...(deps.events === undefined ? {} : { events: deps.events }),
      };
      worker = await deps.queue.process(Queues.schedules, fireHandler(fireDeps), {
        concurrency: deps.concurrency ?? DEFAULT_CONCURRENCY,
        // A slot whose scheduler died mid-fire is retried, or recorded failed: never left running.
        onLost: lostFireHandler(fireDeps),
      });
      log.debug(reconciled, 'scheduler started');
    },
    async stop() {
      const running = worker;
      worker = null;
      await running?.close();
      log.debug('scheduler stopped');
    },
  };
}
