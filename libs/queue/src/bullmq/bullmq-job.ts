import type { Job as BullJob } from 'bullmq';
import type { Job } from '../queue.ts';

/**
 * How port names and ids map onto BullMQ's, in one place. Redis keys are
 * `${prefix}:${bullQueueName}:${bullJobId}` (BullMQ's layout), so every mapping here keeps
 * BullMQ's rules: no `:` in a queue name, and a custom job id is either free of `:` or has
 * exactly three `:`-separated parts.
 *
 * - Added jobs get a random UUID as BullMQ id; the port's `jobId` travels as BullMQ's
 *   de-duplication id (see `BullmqQueue.add`), and comes back as the port job's `id`.
 * - Scheduler jobs are BullMQ's own: `repeat:${schedulerId}:${slotMs}`, made by BullMQ.
 * - `at` jobs mirror that shape: `at:${encodeURIComponent(schedulerId)}:${slotMs}`.
 * - Both scheduler kinds reach handlers with the port id `${schedulerId}:${slotIso}`, as in the
 *   embedded adapter.
 */

/** BullMQ refuses `:` in a queue name; such names (and `~`-names, to stay injective) are escaped. */
export function bullQueueName(queue: string): string {
  return queue.includes(':') || queue.startsWith('~') ? `~${encodeURIComponent(queue)}` : queue;
}

/** The deterministic BullMQ id of an `at` scheduler's one job: a second add of it is a no-op. */
export function atJobId(schedulerId: string, atMs: number): string {
  return `at:${encodeURIComponent(schedulerId)}:${atMs}`;
}

/**
 * An `every` slot as the port names it: the multiple of `everyMs` at or before BullMQ's time.
 * BullMQ's first slot is our `startDate` (the next multiple) unless its script runs after that
 * instant: then it takes its own "now", a few ms past the multiple, and keeps that offset for
 * every later slot. Flooring gives each of those fires the slot it was made for.
 */
export function alignedSlot(ms: number, everyMs: number | undefined): number {
  return everyMs !== undefined && everyMs > 0 ? Math.floor(ms / everyMs) * everyMs : ms;
}

/** The scheduler and slot a BullMQ job was made for, or undefined for an added job. */
export function slotOf(job: Pick<BullJob, 'id' | 'repeatJobKey' | 'opts'>): { schedulerId: string; slotMs: number } | undefined {
  const id = job.id ?? '';
  const cut = id.lastIndexOf(':');
  const slotMs = Number(id.slice(cut + 1));
  if (cut < 0 || !Number.isSafeInteger(slotMs)) return undefined;
  // A scheduler's job carries its repeat options (BullMQ's internal RepeatableJobOptions type).
  const every = (job.opts as { repeat?: { every?: number } }).repeat?.every;
  if (job.repeatJobKey && id.startsWith('repeat:')) return { schedulerId: job.repeatJobKey, slotMs: alignedSlot(slotMs, every) };
  if (id.startsWith('at:')) return { schedulerId: decodeURIComponent(id.slice('at:'.length, cut)), slotMs };
  return undefined;
}

/** The attempts a job was added with (1 when none was given). */
export function attemptsOf(job: Pick<BullJob, 'opts'>): number {
  return Math.max(1, job.opts.attempts ?? 1);
}

/** The port's view of a BullMQ job handed to a worker of `queue`. */
export function toPortJob(queue: string, job: BullJob): Job<unknown> {
  // attemptsStarted counts every run, those lost to a stall included (the port counts them as
  // attempts); attemptsMade counts failures only, so the running one is at least the next.
  const base = { queue, data: job.data as unknown, attempt: Math.max(job.attemptsStarted, job.attemptsMade + 1) };
  const slot = slotOf(job);
  if (!slot) return { id: job.deduplicationId ?? job.id ?? '', ...base };
  const slotAt = new Date(slot.slotMs).toISOString();
  return { id: `${slot.schedulerId}:${slotAt}`, ...base, slot_at: slotAt, scheduler_id: slot.schedulerId };
}
