/**
 * The queue port: delayed, retried and repeating jobs. Shaped after BullMQ (the distributed
 * adapter) and reproduced by the embedded adapter on the embedded store's SQLite file, so
 * pending jobs survive a restart in both modes (pinned by the queue conformance suite).
 *
 * - `add` with a `jobId` is de-duplicated: a second add of the same id while the first exists
 *   returns `{duplicate: true}` and schedules nothing.
 * - A handler that throws is retried up to `attempts` in total with exponential backoff
 *   (`backoffMs * 2^(attempt-1)`), then the job is failed.
 * - A run lost with its process (killed, or stalled past its lease) counts as an attempt: once the
 *   lease runs out another process runs the job again as the next `attempt`, without backoff.
 *   When the lost run was the last attempt the job is failed like one whose last attempt threw,
 *   and the worker's `onLost` hook (ProcessOptions) is called with it, in the process that took
 *   the job over: at least once (if that process dies too, the next one calls it again), so a
 *   consumer records the failure (a dead letter, a failed slot) instead of losing the job silently.
 * - A scheduler fires one job per slot. With several processes sharing the queue each slot
 *   still fires once; the job carries `slot_at` (the slot's time) so consumers can derive a
 *   deterministic idempotency key from scheduler id and slot.
 */
export interface Queue {
  add<T>(queue: string, data: T, options?: AddOptions): Promise<{ id: string; duplicate: boolean }>;
  process<T>(queue: string, handler: JobHandler<T>, options?: ProcessOptions<T>): Promise<Worker>;

  /** Creates or replaces the repeating scheduler `schedulerId` on `queue`. */
  upsertScheduler<T>(queue: string, schedulerId: string, repeat: Repeat, data: T): Promise<void>;
  removeScheduler(queue: string, schedulerId: string): Promise<boolean>;
  listSchedulers(queue: string): Promise<SchedulerInfo[]>;

  health(): Promise<{ kind: string; status: 'ok' | 'down'; detail?: string }>;
  close(): Promise<void>;
}

export interface AddOptions {
  /** De-duplication id; generated when absent. */
  jobId?: string;
  delayMs?: number;
  /** Total attempts including the first; default 1. */
  attempts?: number;
  /** Base of the exponential backoff between attempts; default 1000. */
  backoffMs?: number;
}

export type Repeat =
  | { kind: 'cron'; expr: string; tz?: string | null }
  | { kind: 'every'; every_ms: number }
  | { kind: 'at'; at: string };

export interface SchedulerInfo {
  id: string;
  repeat: Repeat;
  /** ISO time of the next slot, or null when none remains. */
  next_at: string | null;
}

export interface Job<T> {
  id: string;
  queue: string;
  data: T;
  /** 1 for the first attempt. */
  attempt: number;
  /** For scheduler jobs: the slot's ISO time; absent otherwise. */
  slot_at?: string;
  /** For scheduler jobs: the scheduler id. */
  scheduler_id?: string;
}

export type JobHandler<T> = (job: Job<T>) => Promise<void>;

export interface ProcessOptions<T> {
  /** Jobs run at once by this worker; default 1. */
  concurrency?: number;
  /**
   * Called for a job whose last attempt was lost with its process (`job.attempt` is that attempt,
   * `reason` says so) before the job is failed; the handler is not called for it. An error it
   * throws is reported to the adapter's `onError` and the job is failed anyway.
   */
  onLost?: (job: Job<T>, reason: string) => Promise<void>;
}

/** The `reason` given to `onLost`, and the error a job failed that way keeps. */
export const LOST_REASON = 'the process running its last attempt stopped (killed, or stalled past its lease)';

export interface Worker {
  /** Stops taking jobs and waits for the running ones. */
  close(): Promise<void>;
}
