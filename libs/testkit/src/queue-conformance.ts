import { describe, expect, it } from 'vitest';
import type { Job } from '@agent-platform/queue';
import { queueLostRunCases } from './queue-conformance-lost.ts';
import { queueSchedulerCases } from './queue-conformance-schedulers.ts';
import { recorder, useQueueHarness, type QueueFactory, type QueueHarness } from './queue-harness.ts';
import { waitUntil } from './wait-until.ts';

/** The queue port's contract (libs/queue/src/queue.ts), run against one adapter. */
export function queueConformance(name: string, factory: QueueFactory): void {
  describe(`Queue conformance: ${name}`, () => {
    const h = useQueueHarness(factory);
    jobCases(h);
    queueSchedulerCases(h);
    queueLostRunCases(h);
  });
}

function jobCases(h: QueueHarness): void {
  it('runs an added job once, with its data and attempt 1', async () => {
    const q = h.name('basic');
    const { jobs, handler } = recorder<{ n: number }>();
    await h.queue.process(q, handler);
    const { id, duplicate } = await h.queue.add(q, { n: 1 });
    expect(duplicate).toBe(false);
    await waitUntil(() => jobs.length === 1, { message: 'the job' });
    expect(jobs[0]).toMatchObject({ id, queue: q, data: { n: 1 }, attempt: 1 });
    expect(jobs[0]!.slot_at).toBeUndefined();
  });

  it('does not run a delayed job before its delay', async () => {
    const q = h.name('delay');
    const { jobs, handler } = recorder();
    await h.queue.process(q, handler);
    const added = Date.now();
    await h.queue.add(q, {}, { delayMs: 300 });
    await waitUntil(() => jobs.length === 1, { message: 'the delayed job' });
    expect(jobs[0]!.at - added).toBeGreaterThanOrEqual(290);
  });

  it('de-duplicates by jobId while the job exists, and accepts the id again once it completed', async () => {
    const q = h.name('dedup');
    const { jobs, handler } = recorder<string>();
    expect(await h.queue.add(q, 'first', { jobId: 'once', delayMs: 150 })).toEqual({ id: 'once', duplicate: false });
    expect(await h.queue.add(q, 'second', { jobId: 'once' })).toEqual({ id: 'once', duplicate: true });
    await h.queue.add(q, 'marker', { delayMs: 300 });
    await h.queue.process(q, handler);
    await waitUntil(() => jobs.some((j) => j.data === 'marker'), { message: 'the marker job' });
    expect(jobs.map((j) => j.data)).toEqual(['first', 'marker']);
    expect(await h.queue.add(q, 'again', { jobId: 'once' })).toEqual({ id: 'once', duplicate: false });
    await waitUntil(() => jobs.length === 3, { message: 'the re-added job' });
  });

  it('retries a failing job with exponential backoff, then gives up after `attempts`', async () => {
    const q = h.name('retry');
    const calls: { attempt: number; at: number; data: unknown }[] = [];
    await h.queue.process(q, async (job: Job<string>) => {
      calls.push({ attempt: job.attempt, at: Date.now(), data: job.data });
      if (job.data === 'flaky') throw new Error(`attempt ${job.attempt} failed`);
    });
    await h.queue.add(q, 'flaky', { attempts: 3, backoffMs: 60 });
    await waitUntil(() => calls.length === 3, { message: 'three attempts' });
    expect(calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(55);
    expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(115);
    await h.queue.add(q, 'marker', { delayMs: 400 });
    await waitUntil(() => calls.some((c) => c.data === 'marker'), { message: 'the marker job' });
    expect(calls.filter((c) => c.data === 'flaky')).toHaveLength(3);
  });

  it('keeps jobs across a close and reopen (durability)', async ({ skip }) => {
    if (!h.hasSecond) return skip('the adapter cannot reopen its data');
    const q = h.name('durable');
    await h.queue.add(q, 'now');
    await h.queue.add(q, 'later', { delayMs: 100 });
    await h.queue.upsertScheduler(q, 'tick', { kind: 'every', every_ms: 100 }, 'tick');
    await h.queue.close();
    const reopened = await h.second();
    const { jobs, handler } = recorder<string>();
    await reopened.process(q, handler);
    await waitUntil(() => ['now', 'later', 'tick'].every((d) => jobs.some((j) => j.data === d)), { message: 'jobs and slots after reopen' });
    expect(jobs.filter((j) => j.data !== 'tick').map((j) => j.data)).toEqual(['now', 'later']);
  });

  it('reports health ok while open', async () => {
    expect(await h.queue.health()).toMatchObject({ status: 'ok' });
  });
}
