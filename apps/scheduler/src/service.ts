import { Queues } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import type { Clock } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Queue, Worker } from '@agent-platform/queue';
import { fireHandler, type FireRetry } from './handlers/fire-handler.ts';

export interface SchedulerDeps {
  queue: Queue;
  bus: Bus;
  logger: Logger;
  clock: Clock;
  /** How long a fire waits for the agent worker; default 305 s (the default invocation timeout plus 5 s). */
  requestTimeoutMs?: () => number;
  /** Default: 5 attempts, 1 s backoff doubling (1, 2, 4, 8 s). */
  retry?: FireRetry;
  /** Fires running at once in this process; default 16 (one slow agent does not hold the others). */
  concurrency?: number;
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
 * The scheduler (STYLE §1): processes queue `schedules`, where every schedule is a job scheduler
 * (`ScheduleRegistrar` in libs/domain puts them there) and each slot becomes one invocation on the
 * bus (`fireHandler`). Any number of scheduler processes may share the queue: the queue fires
 * each slot once, and the slot's idempotency key makes a repeat harmless anyway.
 */
export function createSchedulerService(deps: SchedulerDeps): SchedulerService {
  const log = deps.logger.child({ service: 'scheduler' });
  let worker: Worker | null = null;
  return {
    name: 'scheduler',
    async start() {
      const handler = fireHandler({
        queue: deps.queue,
        bus: deps.bus,
        clock: deps.clock,
        logger: deps.logger,
        requestTimeoutMs: deps.requestTimeoutMs ?? (() => DEFAULT_TIMEOUT_MS),
        retry: deps.retry ?? DEFAULT_RETRY,
      });
      worker = await deps.queue.process(Queues.schedules, handler, { concurrency: deps.concurrency ?? DEFAULT_CONCURRENCY });
      log.debug('scheduler started');
    },
    async stop() {
      const running = worker;
      worker = null;
      await running?.close();
      log.debug('scheduler stopped');
    },
  };
}
