import { randomUUID } from 'node:crypto';
import { Queue as BullQueue, UnrecoverableError, Worker as BullWorker, type Job as BullJob } from 'bullmq';
import { Redis } from 'ioredis';
import { LOST_REASON, type AddOptions, type Job, type JobHandler, type ProcessOptions, type Queue, type Repeat, type SchedulerInfo, type Worker } from '../queue.ts';
import type { FailedJob } from '../embedded/job-table.ts';
import { attemptsOf, bullQueueName, toPortJob } from './bullmq-job.ts';
import { BullmqSchedulers } from './bullmq-schedulers.ts';

export interface BullmqQueueOptions {
  /** `redis://[user:password@]host:port[/db]`. */
  redisUrl: string;
  /** First part of every Redis key (`${prefix}:${queue}:...`); default `ap`. */
  prefix?: string;
  /** Receives connection and worker-loop errors (Redis down, a reconnect); the adapter carries on. */
  onError?: (error: unknown) => void;
  /**
   * How long a running job stays locked without renewal (BullMQ `lockDuration`), and how often
   * workers look for jobs whose lock expired (`stalledInterval`): the time before a job whose
   * process died runs again. Default 30 s.
   */
  lockMs?: number;
  /**
   * Time for the adapter's own due-time decisions: the delay of an `at` job and the first
   * `every` slot. BullMQ itself (delays, promotion, next slots) runs on the system clock, so a
   * clock far from it only makes sense in tests of those two decisions.
   */
  clock?: { now(): Date };
}

/** Waits before a worker retries its loop after a connection error (BullMQ's default: 15 s). */
const RUN_RETRY_DELAY_MS = 1_000;
/**
 * BullMQ's stalled check never fails a job itself (its default fails one stalled twice, whatever
 * its attempts, outside retries and `onLost`): a stalled run is counted as an attempt instead
 * (`attemptsStarted`), and `run` below fails the job once every attempt was started.
 */
const NEVER_FAIL_STALLED = 1_000_000;
/** How long `health()` waits for PONG. */
const PING_TIMEOUT_MS = 1_000;

/**
 * The queue on Redis through BullMQ (distributed mode). One BullMQ `Queue` per port queue name,
 * one BullMQ `Worker` per `process` call. Delays, retries with exponential backoff, dedup,
 * stalled-job recovery and scheduler slots are BullMQ's, done in Redis by Lua scripts, so they
 * hold across processes; docs/architecture.md ("Queue (BullMQ)") lists the keys and what Redis
 * must persist.
 */
export class BullmqQueue implements Queue {
  private readonly queues = new Map<string, BullQueue>();
  private readonly workers = new Set<BullWorker>();
  private readonly schedulers: BullmqSchedulers;
  private closing: Promise<void> | undefined;

  private constructor(
    /** Commands of queues, the scheduler registry and health: fail after ioredis' retries. */
    private readonly client: Redis,
    /** Workers' connection: `maxRetriesPerRequest: null` (BullMQ requires it), so a job's completion waits out a Redis restart. */
    private readonly workerConnection: Redis,
    private readonly prefix: string,
    private readonly onError: (error: unknown) => void,
    now: () => number,
    private readonly lockMs: number,
  ) {
    this.schedulers = new BullmqSchedulers(client, now);
  }

  /** Connects both Redis connections; rejects (closing them) when Redis cannot be reached. */
  static async connect(options: BullmqQueueOptions): Promise<BullmqQueue> {
    const onError = options.onError ?? (() => undefined);
    // Reconnect forever, backing off to one attempt every 2 s: Redis restarts are survived.
    const base = { lazyConnect: true, retryStrategy: (times: number) => Math.min(times * 100, 2_000) };
    const client = new Redis(options.redisUrl, base);
    const workerConnection = new Redis(options.redisUrl, { ...base, maxRetriesPerRequest: null });
    for (const connection of [client, workerConnection]) connection.on('error', onError);
    try {
      await Promise.all([client.connect(), workerConnection.connect()]);
    } catch (error) {
      client.disconnect();
      workerConnection.disconnect();
      throw new Error(`cannot connect to Redis for the queue: ${(error as Error).message}`, { cause: error });
    }
    const clock = options.clock;
    const now = clock ? () => clock.now().getTime() : () => Date.now();
    return new BullmqQueue(client, workerConnection, options.prefix ?? 'ap', onError, now, options.lockMs ?? 30_000);
  }

  /**
   * De-duplication without a race: the BullMQ job id is always fresh, and the port's `jobId`
   * is BullMQ's de-duplication id. BullMQ's add script sets `${prefix}:${queue}:de:${jobId}`
   * with NX and, when it already exists, adds nothing and returns the existing job's id. So the
   * returned id differs from ours exactly when the add was a duplicate, decided atomically in
   * Redis. BullMQ deletes that key when the job completes or finally fails (and recovers it if
   * its job vanished), so the id is then free again, as the port requires.
   */
  async add<T>(queue: string, data: T, options: AddOptions = {}): Promise<{ id: string; duplicate: boolean }> {
    this.assertOpen();
    const bullId = randomUUID();
    const id = options.jobId ?? bullId;
    const job = await this.queue(queue).add(id, data ?? null, {
      jobId: bullId,
      ...(options.jobId === undefined ? {} : { deduplication: { id: options.jobId } }),
      delay: Math.max(0, options.delayMs ?? 0),
      attempts: Math.max(1, options.attempts ?? 1),
      // BullMQ's exponential delay is `delay * 2^(attemptsMade-1)` with attemptsMade counting
      // the failed attempt: backoffMs after the first, 2 * backoffMs after the second, as the port says.
      backoff: { type: 'exponential', delay: options.backoffMs ?? 1_000 },
      removeOnComplete: true,
      removeOnFail: false,
    });
    return { id, duplicate: job.id !== bullId };
  }

  async process<T>(queue: string, handler: JobHandler<T>, options?: ProcessOptions<T>): Promise<Worker> {
    this.assertOpen();
    const onLost = options?.onLost as ProcessOptions<unknown>['onLost'];
    const run = (job: BullJob) => this.run(queue, job, handler as JobHandler<unknown>, onLost);
    const worker = new BullWorker(bullQueueName(queue), run, {
      connection: this.workerConnection,
      prefix: this.prefix,
      concurrency: Math.max(1, options?.concurrency ?? 1),
      runRetryDelay: RUN_RETRY_DELAY_MS,
      lockDuration: this.lockMs,
      stalledInterval: this.lockMs,
      maxStalledCount: NEVER_FAIL_STALLED,
    });
    worker.on('error', this.onError);
    this.workers.add(worker);
    await worker.waitUntilReady();
    return {
      close: async () => {
        this.workers.delete(worker);
        await worker.close();
      },
    };
  }

  async upsertScheduler<T>(queue: string, schedulerId: string, repeat: Repeat, data: T): Promise<void> {
    this.assertOpen();
    await this.schedulers.upsert(this.queue(queue), schedulerId, repeat, data);
  }

  async removeScheduler(queue: string, schedulerId: string): Promise<boolean> {
    this.assertOpen();
    return this.schedulers.remove(this.queue(queue), schedulerId);
  }

  async listSchedulers(queue: string): Promise<SchedulerInfo[]> {
    this.assertOpen();
    return this.schedulers.list(this.queue(queue));
  }

  /** Jobs of `queue` that used up their attempts, with the last error. Inspection only, not on the port. */
  async failedJobs(queue: string): Promise<FailedJob[]> {
    this.assertOpen();
    const jobs = await this.queue(queue).getFailed();
    return jobs
      .sort((a, b) => (a.finishedOn ?? 0) - (b.finishedOn ?? 0))
      .map((job) => ({ ...pick(toPortJob(queue, job)), attempt: Math.min(job.attemptsStarted, attemptsOf(job)), error: job.failedReason }));
  }

  async health(): Promise<{ kind: string; status: 'ok' | 'down'; detail?: string }> {
    if (this.closing) return { kind: 'bullmq', status: 'down', detail: 'closed' };
    if (this.client.status !== 'ready') return { kind: 'bullmq', status: 'down', detail: `redis connection ${this.client.status}` };
    try {
      await withTimeout(this.client.ping(), PING_TIMEOUT_MS, 'PING');
      return { kind: 'bullmq', status: 'ok' };
    } catch (error) {
      return { kind: 'bullmq', status: 'down', detail: (error as Error).message };
    }
  }

  /** Closes workers (waiting for running handlers), then queues, then connections. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const workers = [...this.workers];
      this.workers.clear();
      await Promise.allSettled(workers.map((w) => w.close()));
      await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
      this.queues.clear();
      await Promise.allSettled([quit(this.client), quit(this.workerConnection)]);
    })();
    return this.closing;
  }

  /**
   * One run of a job. Its attempt is BullMQ's `attemptsStarted`, which counts runs lost to a
   * stall. A run that finds every attempt started (the last one was lost) calls `onLost` instead
   * of the handler; that run and a handler that throws on the last attempt end the job for good
   * (UnrecoverableError), since BullMQ alone would retry while `attemptsMade` (failures only) is
   * below `attempts`.
   */
  private async run(queue: string, job: BullJob, handler: JobHandler<unknown>, onLost: ProcessOptions<unknown>['onLost']): Promise<void> {
    const portJob = toPortJob(queue, job);
    const attempts = attemptsOf(job);
    if (portJob.attempt > attempts) {
      await onLost?.({ ...portJob, attempt: attempts }, LOST_REASON).catch((error: unknown) => this.onError(error));
      throw new UnrecoverableError(LOST_REASON);
    }
    try {
      await handler(portJob);
    } catch (error) {
      if (portJob.attempt < attempts) throw error;
      throw new UnrecoverableError(error instanceof Error ? error.message || error.name : String(error));
    }
  }

  /** The BullMQ queue for a port queue name, made on first use; it shares `client`. */
  private queue(name: string): BullQueue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new BullQueue(bullQueueName(name), { connection: this.client, prefix: this.prefix });
      queue.on('error', this.onError);
      this.queues.set(name, queue);
    }
    return queue;
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('the queue is closed');
  }
}

/** Connects to Redis at `options.redisUrl` and returns the queue; `close()` it. */
export function connectBullmqQueue(options: BullmqQueueOptions): Promise<BullmqQueue> {
  return BullmqQueue.connect(options);
}

function pick(job: Job<unknown>): { id: string; data: unknown } {
  return { id: job.id, data: job.data };
}

/** QUIT when connected (a clean goodbye), bounded; then drop the socket and stop reconnecting. */
async function quit(connection: Redis): Promise<void> {
  try {
    if (connection.status === 'ready') await withTimeout(connection.quit(), PING_TIMEOUT_MS, 'QUIT');
  } catch {
    // Dropped below either way.
  }
  connection.disconnect();
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} got no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
