import { randomUUID } from 'node:crypto';
import { LOST_REASON, type AddOptions, type Job } from '../queue.ts';
import type { SqliteDatabase } from './sqlite.ts';

/**
 * Job states: `pending` (waiting for `run_at`), `running` (claimed; `lease_until` says until when
 * the claim holds), `failed` (attempts exhausted, kept with `last_error`). A completed job is
 * deleted, so its id can be added again.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  queue TEXT NOT NULL,
  id TEXT NOT NULL,
  data TEXT NOT NULL,
  state TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  backoff_ms INTEGER NOT NULL,
  run_at INTEGER NOT NULL,
  lease_until INTEGER,
  lease_token TEXT,
  slot_at TEXT,
  scheduler_id TEXT,
  last_error TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (queue, id)
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (queue, state, run_at);
`;

interface JobRow {
  queue: string;
  id: string;
  data: string;
  state: 'pending' | 'running' | 'failed';
  attempt: number;
  max_attempts: number;
  backoff_ms: number;
  slot_at: string | null;
  scheduler_id: string | null;
  last_error: string | null;
  lease_until: number | null;
}

export interface NewJob {
  queue: string;
  id?: string;
  data: unknown;
  runAt: number;
  attempts: number;
  backoffMs: number;
  slotAt?: string;
  schedulerId?: string;
}

/** A claimed job and the token that proves the claim is still ours. */
export interface Claim {
  job: Job<unknown>;
  token: string;
  /** The job's last attempt was lost: this claim is for calling `onLost`, then `failLost`. */
  lost?: true;
}

export interface FailedJob {
  id: string;
  data: unknown;
  attempt: number;
  error: string;
}

/** The jobs table. Every method is one short synchronous transaction: no lock outlives a call. */
export class JobTable {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
  }

  add(queue: string, data: unknown, options: AddOptions, now: number): { id: string; duplicate: boolean } {
    const job: NewJob = {
      queue,
      data,
      runAt: now + Math.max(0, options.delayMs ?? 0),
      attempts: Math.max(1, options.attempts ?? 1),
      backoffMs: Math.max(0, options.backoffMs ?? 1000),
    };
    if (options.jobId !== undefined) job.id = options.jobId;
    return this.db.transaction(() => this.insert(job, now)).immediate();
  }

  /** Inserts unless a job with the id is pending or running; a failed one is replaced. Call inside a transaction. */
  insert(job: NewJob, now: number): { id: string; duplicate: boolean } {
    const id = job.id ?? randomUUID();
    const existing = this.db.prepare('SELECT state FROM jobs WHERE queue = ? AND id = ?').get(job.queue, id) as
      | { state: JobRow['state'] }
      | undefined;
    if (existing && existing.state !== 'failed') return { id, duplicate: true };
    this.db
      .prepare(
        `INSERT OR REPLACE INTO jobs (queue, id, data, state, attempt, max_attempts, backoff_ms, run_at, slot_at, scheduler_id, updated_at)
         VALUES (?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?)`,
      )
      .run(job.queue, id, JSON.stringify(job.data ?? null), job.attempts, job.backoffMs, job.runAt, job.slotAt ?? null, job.schedulerId ?? null, now);
    return { id, duplicate: false };
  }

  /**
   * Claims the oldest due job of `queue` under `BEGIN IMMEDIATE`, so two processes never claim
   * the same one. A running job whose lease expired (its process died) is due again as the next
   * attempt: the lost run counted as one. If that lost run was its last attempt, the job is
   * claimed as `lost` when `withLost` (the worker has `onLost`; its attempt stays the last one,
   * and a claimant that dies too leaves it to the next), or failed at once otherwise.
   */
  claim(queue: string, now: number, leaseMs: number, withLost = false): Claim | undefined {
    return this.db
      .transaction((): Claim | undefined => {
        for (;;) {
          const row = this.db
            .prepare(
              `SELECT * FROM jobs WHERE queue = ?
                 AND ((state = 'pending' AND run_at <= ?) OR (state = 'running' AND lease_until < ?))
               ORDER BY run_at LIMIT 1`,
            )
            .get(queue, now, now) as JobRow | undefined;
          if (!row) return undefined;
          const lost = row.state === 'running' && row.attempt >= row.max_attempts;
          if (lost && !withLost) {
            this.markFailed(row, LOST_REASON, now);
            continue;
          }
          const token = randomUUID();
          const attempt = lost ? row.attempt : row.attempt + 1;
          this.db
            .prepare(`UPDATE jobs SET state = 'running', attempt = ?, lease_until = ?, lease_token = ?, updated_at = ? WHERE queue = ? AND id = ?`)
            .run(attempt, now + leaseMs, token, now, queue, row.id);
          return lost ? { token, job: toJob(row, attempt), lost: true } : { token, job: toJob(row, attempt) };
        }
      })
      .immediate();
  }

  /** Fails a job claimed as `lost`, once its `onLost` was called. */
  failLost(queue: string, id: string, token: string, now: number): void {
    this.db
      .prepare(`UPDATE jobs SET state = 'failed', lease_until = NULL, lease_token = NULL, last_error = ?, updated_at = ? WHERE queue = ? AND id = ? AND lease_token = ? AND state = 'running'`)
      .run(LOST_REASON, now, queue, id, token);
  }

  /** Extends a claim; false when the claim was lost (lease expired and another process took it). */
  renew(queue: string, id: string, token: string, leaseUntil: number): boolean {
    return this.db.prepare('UPDATE jobs SET lease_until = ? WHERE queue = ? AND id = ? AND lease_token = ?').run(leaseUntil, queue, id, token).changes > 0;
  }

  complete(queue: string, id: string, token: string): void {
    this.db.prepare(`DELETE FROM jobs WHERE queue = ? AND id = ? AND lease_token = ? AND state = 'running'`).run(queue, id, token);
  }

  /** Records a failed attempt: back to pending after `backoff_ms * 2^(attempt-1)`, or failed for good. */
  fail(queue: string, id: string, token: string, error: string, now: number): void {
    this.db
      .transaction(() => {
        const row = this.db.prepare(`SELECT * FROM jobs WHERE queue = ? AND id = ? AND lease_token = ? AND state = 'running'`).get(queue, id, token) as
          | JobRow
          | undefined;
        if (!row) return;
        if (row.attempt >= row.max_attempts) return this.markFailed(row, error, now);
        const runAt = now + row.backoff_ms * 2 ** (row.attempt - 1);
        this.db
          .prepare(`UPDATE jobs SET state = 'pending', run_at = ?, lease_until = NULL, lease_token = NULL, last_error = ?, updated_at = ? WHERE queue = ? AND id = ?`)
          .run(runAt, error, now, queue, id);
      })
      .immediate();
  }

  failed(queue: string): FailedJob[] {
    const rows = this.db.prepare(`SELECT * FROM jobs WHERE queue = ? AND state = 'failed' ORDER BY updated_at`).all(queue) as JobRow[];
    return rows.map((r) => ({ id: r.id, data: JSON.parse(r.data), attempt: r.attempt, error: r.last_error ?? '' }));
  }

  /** The earliest pending `run_at` after `now`, to time the next poll. */
  nextRunAfter(now: number): number | undefined {
    const row = this.db.prepare(`SELECT MIN(run_at) AS t FROM jobs WHERE state = 'pending' AND run_at > ?`).get(now) as { t: number | null };
    return row.t ?? undefined;
  }

  private markFailed(row: JobRow, error: string, now: number): void {
    this.db
      .prepare(`UPDATE jobs SET state = 'failed', lease_until = NULL, lease_token = NULL, last_error = ?, updated_at = ? WHERE queue = ? AND id = ?`)
      .run(error, now, row.queue, row.id);
  }
}

function toJob(row: JobRow, attempt: number): Job<unknown> {
  const job: Job<unknown> = { id: row.id, queue: row.queue, data: JSON.parse(row.data), attempt };
  if (row.slot_at !== null) job.slot_at = row.slot_at;
  if (row.scheduler_id !== null) job.scheduler_id = row.scheduler_id;
  return job;
}
