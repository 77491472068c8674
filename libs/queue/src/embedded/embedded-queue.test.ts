import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOST_REASON } from '../queue.ts';
import { queueConformance, recorder, waitUntil } from '@agent-platform/testkit';
import { openEmbeddedQueue, type EmbeddedQueue, type EmbeddedQueueOptions } from './embedded-queue.ts';
import { openSqlite } from './sqlite.ts';

queueConformance('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ap-queue-conf-'));
  const path = join(dir, 'queue.db');
  return {
    queue: await openEmbeddedQueue({ path }),
    second: () => openEmbeddedQueue({ path }),
    leased: (leaseMs) => ({
      open: () => openEmbeddedQueue({ path, leaseMs, pollIntervalMs: 50 }),
      child: { kind: 'embedded', path, leaseMs },
    }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

/** A clock the test moves by hand. */
function manualClock(iso: string): { now(): Date; set(iso: string): void } {
  let t = Date.parse(iso);
  return { now: () => new Date(t), set: (v) => (t = Date.parse(v)) };
}

describe('EmbeddedQueue', () => {
  let dir: string;
  let path: string;
  const opened: EmbeddedQueue[] = [];
  const open = async (options: Omit<EmbeddedQueueOptions, 'path'> = {}) => {
    const queue = await openEmbeddedQueue({ path, ...options });
    opened.push(queue);
    return queue;
  };
  /** Rewrites a job as if a process claimed it and died: running, with a lease in the past. */
  const simulateDeadClaim = (id: string, attempt: number) => {
    const db = openSqlite(path);
    db.prepare(`UPDATE jobs SET state = 'running', attempt = ?, lease_until = ?, lease_token = 'dead' WHERE id = ?`).run(attempt, Date.now() - 1, id);
    db.close();
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ap-queue-'));
    path = join(dir, 'nested', 'queue.db');
  });
  afterEach(async () => {
    for (const queue of opened.splice(0)) await queue.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reclaims a job whose lease expired (its process died) as the next attempt', async () => {
    const queue = await open();
    const { id } = await queue.add('work', { n: 1 }, { attempts: 3 });
    simulateDeadClaim(id, 1);
    const { jobs, handler } = recorder();
    await queue.process('work', handler);
    await waitUntil(() => jobs.length === 1, { message: 'the reclaimed job' });
    expect(jobs[0]).toMatchObject({ id, attempt: 2 });
  });

  it('fails a job whose lease expired on its last attempt, keeping the reason', async () => {
    const queue = await open();
    const { id } = await queue.add('work', {});
    simulateDeadClaim(id, 1);
    await queue.process('work', recorder().handler);
    await waitUntil(async () => (await queue.failedJobs('work')).length === 1, { message: 'the failed job' });
    expect((await queue.failedJobs('work'))[0]).toMatchObject({ id, error: LOST_REASON });
  });

  it('keeps a job that used up its attempts, with its last error', async () => {
    const queue = await open();
    await queue.process('work', async (job) => {
      throw new Error(`bad input on attempt ${job.attempt}`);
    });
    await queue.add('work', { n: 2 }, { jobId: 'j', attempts: 2, backoffMs: 10 });
    await waitUntil(async () => (await queue.failedJobs('work')).length === 1, { message: 'the failed job' });
    expect(await queue.failedJobs('work')).toEqual([{ id: 'j', data: { n: 2 }, attempt: 2, error: 'bad input on attempt 2' }]);
    expect(await queue.add('work', {}, { jobId: 'j' })).toEqual({ id: 'j', duplicate: false });
  });

  it('renews the lease of a long handler, so another process does not take the job', async () => {
    const first = await open({ leaseMs: 90 });
    const second = await open({ leaseMs: 90 });
    const runs: unknown[] = [];
    const slow = async (job: { data: unknown }) => {
      runs.push(job.data);
      await new Promise((resolve) => setTimeout(resolve, 400));
    };
    await first.process('work', slow);
    await first.add('work', 'long', { attempts: 3 });
    await waitUntil(() => runs.length === 1, { message: 'the first run' });
    await second.process('work', slow);
    await second.add('work', 'marker', { delayMs: 500 });
    await waitUntil(() => runs.includes('marker'), { message: 'the marker job' });
    await Promise.all([first.close(), second.close()]);
    expect(runs.filter((d) => d === 'long')).toHaveLength(1);
  });

  it('after downtime fires one catch-up job for the latest missed slot, not one per slot', async () => {
    const clock = manualClock('2030-01-01T00:00:00.500Z');
    const before = await open({ clock });
    await before.upsertScheduler('tick', 'beat', { kind: 'every', every_ms: 1_000 }, {});
    expect((await before.listSchedulers('tick'))[0]?.next_at).toBe('2030-01-01T00:00:01.000Z');
    await before.close();

    clock.set('2030-01-01T00:00:10.500Z');
    const after = await open({ clock });
    // Boot code re-upserts its schedulers; an unchanged repeat keeps the missed slot.
    await after.upsertScheduler('tick', 'beat', { kind: 'every', every_ms: 1_000 }, {});
    const { jobs, handler } = recorder<string>();
    await after.process('tick', handler);
    await waitUntil(() => jobs.length === 1, { message: 'the catch-up job' });
    await after.add('tick', 'marker');
    await waitUntil(() => jobs.some((j) => j.data === 'marker'), { message: 'the marker job' });
    expect(jobs.filter((j) => j.scheduler_id === 'beat').map((j) => j.slot_at)).toEqual(['2030-01-01T00:00:10.000Z']);
    expect(jobs[0]!.id).toBe('beat:2030-01-01T00:00:10.000Z');
    expect((await after.listSchedulers('tick'))[0]?.next_at).toBe('2030-01-01T00:00:11.000Z');
  });

  it('moves a changed scheduler to the new repeat’s next slot, in its time zone', async () => {
    const clock = manualClock('2030-01-01T00:00:00.000Z');
    const queue = await open({ clock });
    await queue.upsertScheduler('tick', 's', { kind: 'every', every_ms: 60_000 }, {});
    await queue.upsertScheduler('tick', 's', { kind: 'cron', expr: '30 9 * * *', tz: 'America/New_York' }, {});
    expect(await queue.listSchedulers('tick')).toEqual([
      { id: 's', repeat: { kind: 'cron', expr: '30 9 * * *', tz: 'America/New_York' }, next_at: '2030-01-01T14:30:00.000Z' },
    ]);
  });

  it('reports down after close and refuses new work', async () => {
    const queue = await open();
    await queue.close();
    expect(await queue.health()).toMatchObject({ kind: 'embedded', status: 'down' });
    await expect(queue.add('work', {})).rejects.toThrow('closed');
  });
});
