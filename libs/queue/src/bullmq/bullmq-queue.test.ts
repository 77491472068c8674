import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queueConformance, recorder, requireBinary, startRedisServer, waitUntil, type RedisServerHandle } from '@agent-platform/testkit';
import { connectBullmqQueue, type BullmqQueue } from './bullmq-queue.ts';

// Never the machine's shared Redis: every suite here spawns its own on a free port.
const redisServer = requireBinary('redis-server');

describe.skipIf(redisServer === null)('BullmqQueue', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.dispose();
  });

  // A fresh key prefix per test: the tests share one server but never see each other's keys.
  queueConformance('bullmq', async () => {
    const prefix = `conf-${randomUUID().slice(0, 8)}`;
    const open = () => connectBullmqQueue({ redisUrl: server.url, prefix });
    return {
      queue: await open(),
      second: open,
      leased: (leaseMs) => ({
        open: () => connectBullmqQueue({ redisUrl: server.url, prefix, lockMs: leaseMs }),
        child: { kind: 'bullmq', redisUrl: server.url, prefix, leaseMs },
      }),
      cleanup: async () => undefined,
    };
  });

  describe('specifics', () => {
    const opened: BullmqQueue[] = [];
    const open = async () => {
      const queue = await connectBullmqQueue({ redisUrl: server.url, prefix: `spec-${randomUUID().slice(0, 8)}` });
      opened.push(queue);
      return queue;
    };
    afterEach(async () => {
      for (const queue of opened.splice(0)) await queue.close();
    });

    it('gives `every` slots on multiples of every_ms, with the slot in the job id, never before the slot', async () => {
      const queue = await open();
      const { jobs, handler } = recorder();
      await queue.process('tick', handler);
      await queue.upsertScheduler('tick', 'beat', { kind: 'every', every_ms: 200 }, { n: 1 });
      await waitUntil(() => jobs.length >= 2, { message: 'two slots' });
      for (const job of jobs) {
        expect(Date.parse(job.slot_at!) % 200).toBe(0);
        expect(job.id).toBe(`beat:${job.slot_at}`);
        expect(job.at).toBeGreaterThanOrEqual(Date.parse(job.slot_at!));
      }
      expect(Date.parse(jobs[1]!.slot_at!) - Date.parse(jobs[0]!.slot_at!)).toBe(200);
    });

    it('keeps `every` slots on multiples when BullMQ places the first one a few ms past its multiple', async () => {
      // An upsert a few ms before a multiple reaches BullMQ's script after it: BullMQ then starts
      // at its own "now" and keeps that offset. A clock 1.5 slots behind makes that happen each time.
      const queue = await connectBullmqQueue({ redisUrl: server.url, prefix: `spec-${randomUUID().slice(0, 8)}`, clock: { now: () => new Date(Date.now() - 300) } });
      opened.push(queue);
      const { jobs, handler } = recorder();
      await queue.process('tick', handler);
      await queue.upsertScheduler('tick', 'late', { kind: 'every', every_ms: 200 }, { n: 1 });
      const [listed] = await queue.listSchedulers('tick');
      expect(Date.parse(listed!.next_at!) % 200).toBe(0);
      await waitUntil(() => jobs.length >= 3, { message: 'three slots' });
      const slots = jobs.map((job) => Date.parse(job.slot_at!));
      for (const [i, slot] of slots.entries()) {
        expect(slot % 200).toBe(0);
        expect(jobs[i]!.id).toBe(`late:${jobs[i]!.slot_at}`);
        if (i > 0) expect(slot - slots[i - 1]!).toBe(200);
      }
    });

    it('fires an `at` scheduler at its exact slot once, also when boot code re-upserts it afterwards', async () => {
      const queue = await open();
      const { jobs, handler } = recorder<string>();
      await queue.process('once', handler);
      const at = new Date(Date.now() + 100).toISOString();
      await queue.upsertScheduler('once', 'remind', { kind: 'at', at }, 'v1');
      await waitUntil(() => jobs.length === 1, { message: 'the one-shot slot' });
      expect(jobs[0]).toMatchObject({ id: `remind:${at}`, slot_at: at, scheduler_id: 'remind', data: 'v1', attempt: 1 });
      await queue.upsertScheduler('once', 'remind', { kind: 'at', at }, 'v2');
      await queue.add('once', 'marker', { delayMs: 300 });
      await waitUntil(() => jobs.some((j) => j.data === 'marker'), { message: 'the marker job' });
      expect(jobs.map((j) => j.data)).toEqual(['v1', 'marker']);
      expect(await queue.listSchedulers('once')).toEqual([{ id: 'remind', repeat: { kind: 'at', at }, next_at: null }]);
    });

    it('moves a pending `at` to its new time and cancels it on removal', async () => {
      const queue = await open();
      const { jobs, handler } = recorder<string>();
      await queue.process('once', handler);
      const far = new Date(Date.now() + 3_600_000).toISOString();
      // A second of room: under a loaded CI machine the four calls below took more than 150 ms once,
      // and `dropped` fired before it was removed (a race of the test, not of the queue).
      const soon = new Date(Date.now() + 1_000).toISOString();
      await queue.upsertScheduler('once', 'moved', { kind: 'at', at: far }, 'moved');
      await queue.upsertScheduler('once', 'dropped', { kind: 'at', at: soon }, 'dropped');
      expect((await queue.listSchedulers('once')).map((s) => s.next_at)).toEqual([soon, far]);
      await queue.upsertScheduler('once', 'moved', { kind: 'at', at: soon }, 'moved');
      expect(await queue.removeScheduler('once', 'dropped')).toBe(true);
      expect(Date.now(), 'the removal came after the slot: the test proves nothing').toBeLessThan(Date.parse(soon));
      await queue.add('once', 'marker', { delayMs: 1_300 });
      await waitUntil(() => jobs.some((j) => j.data === 'marker'), { message: 'the marker job' });
      expect(jobs.map((j) => [j.data, j.slot_at])).toEqual([
        ['moved', soon],
        ['marker', undefined],
      ]);
    });

    it('runs cron in UTC when no zone is given (not the process zone), and lists the repeat as given', async () => {
      const queue = await open();
      const zone = process.env.TZ;
      // BullMQ's cron parsing runs in this process: a zone here would show through.
      process.env.TZ = 'America/New_York';
      try {
        await queue.upsertScheduler('daily', 'nine', { kind: 'cron', expr: '0 9 * * *' }, {});
      } finally {
        if (zone === undefined) delete process.env.TZ;
        else process.env.TZ = zone;
      }
      const [nine] = await queue.listSchedulers('daily');
      expect(nine!.repeat).toEqual({ kind: 'cron', expr: '0 9 * * *' });
      expect(nine!.next_at).toMatch(/T09:00:00\.000Z$/);
    });

    it('reports exactly one of several concurrent adds of one jobId as new', async () => {
      const queue = await open();
      const results = await Promise.all(Array.from({ length: 10 }, (_, n) => queue.add('race', n, { jobId: 'same', delayMs: 60_000 })));
      expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
      expect(new Set(results.map((r) => r.id))).toEqual(new Set(['same']));
    });

    it('keeps a job that used up its attempts, with its last error, and frees its id', async () => {
      const queue = await open();
      await queue.process('work', async (job) => {
        throw new Error(`bad input on attempt ${job.attempt}`);
      });
      await queue.add('work', { n: 2 }, { jobId: 'j', attempts: 2, backoffMs: 10 });
      await waitUntil(async () => (await queue.failedJobs('work')).length === 1, { message: 'the failed job' });
      expect(await queue.failedJobs('work')).toEqual([{ id: 'j', data: { n: 2 }, attempt: 2, error: 'bad input on attempt 2' }]);
      expect(await queue.add('work', {}, { jobId: 'j' })).toEqual({ id: 'j', duplicate: false });
    });

    it('accepts queue names and job ids BullMQ would refuse (a colon, an integer)', async () => {
      const queue = await open();
      const { jobs, handler } = recorder();
      await queue.process('agent:invoke', handler);
      expect(await queue.add('agent:invoke', 'a', { jobId: '42' })).toEqual({ id: '42', duplicate: false });
      await queue.add('agent:invoke', 'b', { jobId: 'inv:7:retry' });
      await waitUntil(() => jobs.length === 2, { message: 'both jobs' });
      expect(jobs.map((j) => [j.id, j.queue])).toEqual([
        ['42', 'agent:invoke'],
        ['inv:7:retry', 'agent:invoke'],
      ]);
    });

    it('reports down after close and refuses new work', async () => {
      const queue = await open();
      await queue.close();
      expect(await queue.health()).toEqual({ kind: 'bullmq', status: 'down', detail: 'closed' });
      await expect(queue.add('work', {})).rejects.toThrow('closed');
    });

    it('fails to connect with a message naming Redis when nothing listens', async () => {
      const stopped = await startRedisServer();
      await stopped.dispose();
      await expect(connectBullmqQueue({ redisUrl: stopped.url })).rejects.toThrow('cannot connect to Redis');
    });
  });
});

describe.skipIf(redisServer === null)('BullmqQueue across a Redis crash', () => {
  let server: RedisServerHandle | undefined;
  let queue: BullmqQueue | undefined;
  afterAll(async () => {
    await queue?.close();
    await server?.dispose();
  });

  it('reconnects after SIGKILL and restart: the delayed job runs once, the scheduler keeps firing, no slot twice', async () => {
    server = await startRedisServer({ persistence: 'aof' });
    queue = await connectBullmqQueue({ redisUrl: server.url, prefix: 'fault' });
    const perSlot = new Map<string, number>();
    const runs: string[] = [];
    await queue.process('work', async (job) => {
      if (job.slot_at) perSlot.set(job.slot_at, (perSlot.get(job.slot_at) ?? 0) + 1);
      else runs.push(job.data as string);
    });
    await queue.upsertScheduler('work', 'beat', { kind: 'every', every_ms: 500 }, 'tick');
    const addedAt = Date.now();
    await queue.add('work', 'delayed', { jobId: 'after-crash', delayMs: 1_500 });
    await waitUntil(() => perSlot.size >= 1, { message: 'a first slot' });

    await server.kill();
    await waitUntil(async () => (await queue!.health()).status === 'down', { message: 'health to report Redis down' });
    // The harder case: the delayed job and at least one slot come due while Redis is gone.
    await waitUntil(() => Date.now() > addedAt + 1_600, { message: 'the delayed job to fall due during the outage' });
    expect(runs).toEqual([]);
    const restartedAt = Date.now();
    await server.restart();

    const slotsAfterRestart = () => [...perSlot.keys()].filter((slot) => Date.parse(slot) > restartedAt).length;
    await waitUntil(() => runs.includes('delayed') && slotsAfterRestart() >= 3, { timeoutMs: 10_000, message: 'the delayed job and three slots after the restart' });
    expect((await queue.health()).status).toBe('ok');
    await queue.add('work', 'marker', { delayMs: 600 });
    await waitUntil(() => runs.includes('marker'), { message: 'the marker job' });
    expect(runs).toEqual(['delayed', 'marker']);
    expect([...perSlot.entries()].filter(([, count]) => count !== 1)).toEqual([]);
  });
});
