import { expect, it } from 'vitest';
import { recorder, type QueueHarness } from './queue-harness.ts';
import { waitUntil } from './wait-until.ts';

function hourIn(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
}

/** Scheduler cases of the queue conformance suite. */
export function queueSchedulerCases(h: QueueHarness): void {
  it('fires an `every` scheduler repeatedly, one job per distinct slot', async () => {
    const q = h.name('every');
    const { jobs, handler } = recorder<{ kind: string }>();
    await h.queue.process(q, handler);
    await h.queue.upsertScheduler(q, 'beat', { kind: 'every', every_ms: 100 }, { kind: 'beat' });
    await waitUntil(() => jobs.length >= 3, { message: 'three slots' });
    const slots = jobs.map((j) => j.slot_at!);
    expect(new Set(slots).size).toBe(slots.length);
    expect([...slots].sort()).toEqual(slots);
    for (const job of jobs) expect(job).toMatchObject({ scheduler_id: 'beat', data: { kind: 'beat' }, queue: q });
  });

  it('fires a 6-field cron (every second) on whole seconds', async () => {
    const q = h.name('cron');
    const { jobs, handler } = recorder();
    await h.queue.process(q, handler);
    await h.queue.upsertScheduler(q, 'each-second', { kind: 'cron', expr: '* * * * * *' }, {});
    await waitUntil(() => jobs.length >= 1, { message: 'a cron slot' });
    expect(new Date(jobs[0]!.slot_at!).getUTCMilliseconds()).toBe(0);
    expect(jobs[0]!.scheduler_id).toBe('each-second');
  });

  it('fires an `at` scheduler once, then has no next slot', async () => {
    const q = h.name('at');
    const { jobs, handler } = recorder();
    await h.queue.process(q, handler);
    const at = new Date(Date.now() + 150).toISOString();
    await h.queue.upsertScheduler(q, 'once', { kind: 'at', at }, {});
    await waitUntil(() => jobs.length === 1, { message: 'the one-shot slot' });
    expect(jobs[0]!.slot_at).toBe(at);
    await waitUntil(async () => (await h.queue.listSchedulers(q))[0]?.next_at === null, { message: 'next_at to become null' });
  });

  it('refuses an invalid cron expression or zone, naming it', async () => {
    const q = h.name('invalid');
    await expect(h.queue.upsertScheduler(q, 'bad', { kind: 'cron', expr: 'every tuesday' }, {})).rejects.toThrow('every tuesday');
    await expect(h.queue.upsertScheduler(q, 'bad', { kind: 'cron', expr: '* * * *' }, {})).rejects.toThrow('* * * *');
    await expect(h.queue.upsertScheduler(q, 'bad', { kind: 'cron', expr: '0 9 * * *', tz: 'Mars/Olympus' }, {})).rejects.toThrow('Mars/Olympus');
    expect(await h.queue.listSchedulers(q)).toEqual([]);
  });

  it('lists schedulers with next_at; an upsert replaces the repeat', async () => {
    const q = h.name('list');
    await h.queue.upsertScheduler(q, 'report', { kind: 'every', every_ms: 3_600_000 }, {});
    const [first] = await h.queue.listSchedulers(q);
    expect(first).toMatchObject({ id: 'report', repeat: { kind: 'every', every_ms: 3_600_000 } });
    expect(Date.parse(first!.next_at!)).toBeGreaterThan(Date.now());
    await h.queue.upsertScheduler(q, 'report', { kind: 'cron', expr: '0 9 * * *', tz: 'Europe/Paris' }, {});
    const list = await h.queue.listSchedulers(q);
    expect(list).toHaveLength(1);
    expect(list[0]!.repeat).toMatchObject({ kind: 'cron', expr: '0 9 * * *', tz: 'Europe/Paris' });
    expect(hourIn(list[0]!.next_at!, 'Europe/Paris')).toBe('09');
  });

  it('stops firing once the scheduler is removed', async () => {
    const q = h.name('remove');
    const { jobs, handler } = recorder<string>();
    await h.queue.process(q, handler);
    await h.queue.upsertScheduler(q, 'beat', { kind: 'every', every_ms: 100 }, 'beat');
    await waitUntil(() => jobs.length >= 1, { message: 'a first slot' });
    expect(await h.queue.removeScheduler(q, 'beat')).toBe(true);
    const removedAt = Date.now();
    expect(await h.queue.removeScheduler(q, 'beat')).toBe(false);
    expect(await h.queue.listSchedulers(q)).toEqual([]);
    await h.queue.add(q, 'marker', { delayMs: 600 });
    await waitUntil(() => jobs.some((j) => j.data === 'marker'), { message: 'the marker job' });
    const late = jobs.filter((j) => j.slot_at !== undefined && Date.parse(j.slot_at) > removedAt + 100);
    expect(late).toEqual([]);
  });

  it('fires each slot exactly once with two queue instances on one scheduler', async ({ skip }) => {
    if (!h.hasSecond) return skip('the adapter has no second instance');
    const q = h.name('shared');
    const other = await h.second();
    const perSlot = new Map<string, number>();
    const handler = async (job: { slot_at?: string }) => {
      perSlot.set(job.slot_at!, (perSlot.get(job.slot_at!) ?? 0) + 1);
    };
    for (const queue of [h.queue, other]) {
      await queue.process(q, handler);
      await queue.upsertScheduler(q, 'shared', { kind: 'every', every_ms: 100 }, {});
    }
    await waitUntil(() => perSlot.size >= 8, { message: 'eight slots' });
    await h.queue.removeScheduler(q, 'shared');
    await Promise.all([h.queue.close(), other.close()]);
    expect([...perSlot.entries()].filter(([, count]) => count !== 1)).toEqual([]);
  });
}
