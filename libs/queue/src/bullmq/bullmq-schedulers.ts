import type { Queue as BullQueue, RepeatOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Repeat, SchedulerInfo } from '../queue.ts';
import { normalizeRepeat, validateRepeat } from '../embedded/repeat-slots.ts';
import { alignedSlot, atJobId } from './bullmq-job.ts';

/** What the registry keeps per scheduler: the port's repeat (canonical) and the job data. */
interface Entry {
  repeat: Repeat;
  data: unknown;
}

/** Options every scheduler job gets: run once (a slot is not retried), dropped when done. */
const SLOT_JOB_OPTIONS = { attempts: 1, removeOnComplete: true, removeOnFail: false } as const;

/** BullMQ states in which a job has not started, so removing it cancels its slot. */
const PENDING_STATES = new Set(['delayed', 'waiting', 'prioritized', 'waiting-children']);

/**
 * Schedulers on BullMQ. `cron` and `every` are BullMQ job schedulers (id = the port's scheduler
 * id); `at` is one delayed job with a deterministic id (`atJobId`). Beside them a registry hash
 * per queue, `${prefix}:${queue}:port:schedulers` (field = scheduler id, value = JSON `Entry`),
 * keeps the repeat as the port spelled it (BullMQ cannot tell "no tz" from "UTC", and has no
 * one-shot kind), and makes re-upserting an unchanged scheduler a no-op, as in the embedded
 * adapter: an `at` that already fired does not fire again when boot code re-upserts it.
 */
export class BullmqSchedulers {
  constructor(
    private readonly redis: Redis,
    private readonly now: () => number,
  ) {}

  async upsert(queue: BullQueue, id: string, repeat: Repeat, data: unknown): Promise<void> {
    // Before any write, so a bad expression or zone leaves nothing behind (BullMQ would only
    // fail later, inside its worker).
    validateRepeat(repeat);
    const entry: Entry = { repeat: normalizeRepeat(repeat), data: data ?? null };
    const previous = await this.read(queue, id);
    if (entry.repeat.kind === 'at') await this.upsertAt(queue, id, entry, previous);
    else await this.upsertRepeating(queue, id, entry, previous);
    await this.redis.hset(registryKey(queue), id, JSON.stringify(entry));
  }

  async remove(queue: BullQueue, id: string): Promise<boolean> {
    const previous = await this.read(queue, id);
    const unregistered = (await this.redis.hdel(registryKey(queue), id)) > 0;
    const removed = await queue.removeJobScheduler(id);
    if (previous?.repeat.kind === 'at') await cancelPending(queue, atJobId(id, Date.parse(previous.repeat.at)));
    return unregistered || removed;
  }

  async list(queue: BullQueue): Promise<SchedulerInfo[]> {
    const fields = await this.redis.hgetall(registryKey(queue));
    const ids = Object.keys(fields).sort();
    return Promise.all(
      ids.map(async (id) => {
        const { repeat } = JSON.parse(fields[id]!) as Entry;
        return { id, repeat, next_at: await this.nextAt(queue, id, repeat) };
      }),
    );
  }

  /** The slot still to fire: BullMQ's score for its schedulers, the pending job's time for `at`. */
  private async nextAt(queue: BullQueue, id: string, repeat: Repeat): Promise<string | null> {
    if (repeat.kind === 'at') {
      const atMs = Date.parse(repeat.at);
      return (await isPending(queue, atJobId(id, atMs))) ? repeat.at : null;
    }
    const next = (await queue.getJobScheduler(id))?.next;
    return typeof next === 'number' ? new Date(alignedSlot(next, repeat.kind === 'every' ? repeat.every_ms : undefined)).toISOString() : null;
  }

  private async upsertAt(queue: BullQueue, id: string, entry: Entry, previous: Entry | undefined): Promise<void> {
    const at = (entry.repeat as Extract<Repeat, { kind: 'at' }>).at;
    const jobId = atJobId(id, Date.parse(at));
    const before = previous?.repeat;
    if (before?.kind === 'at' && before.at === at) {
      // Same slot: it stays fired if it fired; a pending job only takes the new data.
      const job = await queue.getJob(jobId);
      if (job && PENDING_STATES.has(await job.getState())) await job.updateData(entry.data);
      return;
    }
    if (before?.kind === 'at') await cancelPending(queue, atJobId(id, Date.parse(before.at)));
    else await queue.removeJobScheduler(id);
    // BullMQ ignores an add whose id exists, so two processes upserting at once add one job.
    await queue.add(id, entry.data, { ...SLOT_JOB_OPTIONS, jobId, delay: Math.max(0, Date.parse(at) - this.now()) });
  }

  private async upsertRepeating(queue: BullQueue, id: string, entry: Entry, previous: Entry | undefined): Promise<void> {
    if (previous?.repeat.kind === 'at') await cancelPending(queue, atJobId(id, Date.parse(previous.repeat.at)));
    // Unchanged (every process re-upserts at boot): keep BullMQ's pending slot as it is. This also
    // spares BullMQ an override racing a worker that just took the current slot.
    if (previous && JSON.stringify(previous) === JSON.stringify(entry) && (await queue.getJobScheduler(id))) return;
    await queue.upsertJobScheduler(id, this.repeatOptions(entry.repeat), { name: id, data: entry.data, opts: SLOT_JOB_OPTIONS });
  }

  /**
   * BullMQ's repeat options for a port repeat. Cron runs in UTC unless a zone is given (BullMQ
   * would use the process's local zone). `every` slots are multiples of `every_ms` since the
   * epoch, as in the embedded adapter: the first is the next multiple (BullMQ's default would
   * fire at once, at the upsert's millisecond); BullMQ keeps them aligned from there.
   */
  private repeatOptions(repeat: Repeat): Omit<RepeatOptions, 'key'> {
    switch (repeat.kind) {
      case 'cron':
        return { pattern: repeat.expr, tz: repeat.tz ?? 'UTC' };
      case 'every':
        return { every: repeat.every_ms, startDate: (Math.floor(this.now() / repeat.every_ms) + 1) * repeat.every_ms };
      case 'at':
        throw new Error('an `at` scheduler is a delayed job, not a BullMQ job scheduler');
    }
  }

  private async read(queue: BullQueue, id: string): Promise<Entry | undefined> {
    const raw = await this.redis.hget(registryKey(queue), id);
    return raw === null ? undefined : (JSON.parse(raw) as Entry);
  }
}

/**
 * The registry hash's key. Its last part has a `:`, which no job id of this adapter has beyond
 * the `repeat:`/`at:` shapes, so it never meets a job's key.
 */
function registryKey(queue: BullQueue): string {
  return queue.toKey('port:schedulers');
}

async function isPending(queue: BullQueue, jobId: string): Promise<boolean> {
  return PENDING_STATES.has(await queue.getJobState(jobId));
}

/** Removes a job that has not started; one already running (or done) is left alone. */
async function cancelPending(queue: BullQueue, jobId: string): Promise<void> {
  if (!(await isPending(queue, jobId))) return;
  try {
    await queue.remove(jobId);
  } catch {
    // A worker took it between the check and the removal: that slot has fired.
  }
}
