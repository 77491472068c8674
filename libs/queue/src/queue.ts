/**
 * The queue port: delayed, retried and repeating jobs. Shaped after BullMQ (the distributed
 * adapter) and reproduced by the embedded adapter on the embedded store's SQLite file, so
 * pending jobs survive a restart in both modes (pinned by the queue conformance suite).
 *
 * - `add` with a `jobId` is de-duplicated: a second add of the same id while the first exists
 *   returns `{duplicate: true}` and schedules nothing.
 * - A handler that throws is retried up to `attempts` in total with exponential backoff
 *   (`backoffMs * 2^(attempt-1)`), then the job is failed.
 * - A scheduler fires one job per slot. With several processes sharing the queue each slot
 *   still fires once; the job carries `slot_at` (the slot's time) so consumers can derive a
 *   deterministic idempotency key from scheduler id and slot.
 */
export interface Queue {
  add<T>(queue: string, data: T, options?: AddOptions): Promise<{ id: string; duplicate: boolean }>;
  process<T>(queue: string, handler: JobHandler<T>, options?: { concurrency?: number }): Promise<Worker>;

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

export interface Worker {
  /** Stops taking jobs and waits for the running ones. */
  close(): Promise<void>;
}
