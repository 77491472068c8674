import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AddOptions, JobHandler, ProcessOptions, Queue, Repeat, SchedulerInfo, Worker } from '../queue.ts';
import { EmbeddedWorker } from './embedded-worker.ts';
import { JobTable, type FailedJob } from './job-table.ts';
import { SchedulerTable } from './scheduler-table.ts';
import { openSqlite, type SqliteDatabase } from './sqlite.ts';

export interface EmbeddedQueueOptions {
  /** The queue's own SQLite file, typically `<data_dir>/queue.db`; several processes may share it. */
  path: string;
  /** Time for every due-time decision (delays, slots, leases); default the system clock. */
  clock?: { now(): Date };
  /** How often to look for work added by other processes; default 250 ms. */
  pollIntervalMs?: number;
  /** How long a claim holds without renewal before another process may take the job; default 30 s. */
  leaseMs?: number;
  /** Receives errors of the polling loop (a locked or broken file); it keeps polling. */
  onError?: (error: unknown) => void;
  /** `[storage] durability`: `full` (default) syncs every commit to disk, `normal` only at checkpoints. */
  durability?: 'full' | 'normal';
}

/**
 * The queue on a SQLite file (all-in-one mode). Pending, delayed and failed jobs and the
 * schedulers live in the file, so they survive a restart. A poll every `pollIntervalMs` (sooner
 * when the next job or slot is due sooner, at once when this process adds a job) fires due
 * scheduler slots and lets each worker claim due jobs.
 */
export class EmbeddedQueue implements Queue {
  private readonly workers = new Set<EmbeddedWorker>();
  private readonly now: () => number;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly onError: (error: unknown) => void;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private wokenWhilePolling = false;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly jobs: JobTable,
    private readonly schedulers: SchedulerTable,
    options: EmbeddedQueueOptions,
  ) {
    const clock = options.clock;
    this.now = clock ? () => clock.now().getTime() : () => Date.now();
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.onError = options.onError ?? (() => undefined);
    this.schedule(0);
  }

  static async open(options: EmbeddedQueueOptions): Promise<EmbeddedQueue> {
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    // Processes of one host opening a new file together can get SQLITE_BUSY from the switch to WAL
    // or the first CREATE TABLE, which SQLite's busy handler does not wait out: retry for 5 s.
    for (let deadline = Date.now() + 5_000; ; await new Promise((r) => setTimeout(r, 20))) {
      let db: SqliteDatabase | undefined;
      try {
        db = openSqlite(options.path, options.durability);
        const jobs = new JobTable(db);
        return new EmbeddedQueue(db, jobs, new SchedulerTable(db, jobs), options);
      } catch (err) {
        db?.close();
        if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      }
    }
  }

  async add<T>(queue: string, data: T, options: AddOptions = {}): Promise<{ id: string; duplicate: boolean }> {
    this.assertOpen();
    const result = this.jobs.add(queue, data, options, this.now());
    this.wake();
    return result;
  }

  async process<T>(queue: string, handler: JobHandler<T>, options?: ProcessOptions<T>): Promise<Worker> {
    this.assertOpen();
    const worker = new EmbeddedWorker(
      queue,
      handler as JobHandler<unknown>,
      Math.max(1, options?.concurrency ?? 1),
      { jobs: this.jobs, now: this.now, leaseMs: this.leaseMs, wake: () => this.wake(), onError: this.onError },
      options?.onLost as ProcessOptions<unknown>['onLost'],
    );
    this.workers.add(worker);
    this.wake();
    return {
      close: async () => {
        this.workers.delete(worker);
        await worker.close();
      },
    };
  }

  async upsertScheduler<T>(queue: string, schedulerId: string, repeat: Repeat, data: T): Promise<void> {
    this.assertOpen();
    this.schedulers.upsert(queue, schedulerId, repeat, data, this.now());
    this.wake();
  }

  async removeScheduler(queue: string, schedulerId: string): Promise<boolean> {
    this.assertOpen();
    return this.schedulers.remove(queue, schedulerId);
  }

  async listSchedulers(queue: string): Promise<SchedulerInfo[]> {
    this.assertOpen();
    return this.schedulers.list(queue);
  }

  /** Jobs of `queue` that used up their attempts, with the last error. Inspection only, not on the port. */
  async failedJobs(queue: string): Promise<FailedJob[]> {
    this.assertOpen();
    return this.jobs.failed(queue);
  }

  async health(): Promise<{ kind: string; status: 'ok' | 'down'; detail?: string }> {
    return this.closing || !this.db.open ? { kind: 'embedded', status: 'down', detail: 'closed' } : { kind: 'embedded', status: 'ok' };
  }

  /** Stops polling, waits for running handlers, then closes the file. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.timer);
      this.timer = undefined;
      const workers = [...this.workers];
      this.workers.clear();
      await Promise.all(workers.map((w) => w.close()));
      this.db.close();
    })();
    return this.closing;
  }

  /** Polls at once (a job was added, a slot came free) instead of at the next interval. */
  private wake(): void {
    if (this.closing) return;
    if (this.polling) this.wokenWhilePolling = true;
    else this.schedule(0);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.poll(), delayMs);
    // The queue alone never keeps the process alive; the daemon's listeners do.
    this.timer.unref();
  }

  private poll(): void {
    if (this.closing) return;
    const now = this.now();
    this.polling = true;
    this.wokenWhilePolling = false;
    try {
      this.schedulers.fireDue(now);
      for (const worker of this.workers) worker.fill();
    } catch (error) {
      this.onError(error);
    } finally {
      this.polling = false;
    }
    // A handler started by this poll may have added a job already.
    this.schedule(this.wokenWhilePolling ? 0 : this.nextDelay(now));
  }

  /** The poll interval, or less when a job or slot is due sooner. */
  private nextDelay(now: number): number {
    try {
      const next = Math.min(this.jobs.nextRunAfter(now) ?? Infinity, this.schedulers.nextSlotAfter(now) ?? Infinity);
      return Math.max(1, Math.min(this.pollIntervalMs, next - now));
    } catch {
      return this.pollIntervalMs;
    }
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('the queue is closed');
  }
}

/** Opens (creating if needed) the queue file at `options.path`. */
export function openEmbeddedQueue(options: EmbeddedQueueOptions): Promise<EmbeddedQueue> {
  return EmbeddedQueue.open(options);
}
