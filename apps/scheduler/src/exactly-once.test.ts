import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformConfig } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import {
  createAgentStore,
  createScheduleService,
  systemClock,
  type ScheduleService,
} from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import { connectBullmqQueue, type BullmqQueue } from '@agent-platform/queue/bullmq';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { requireBinary, startRedisServer, waitUntil, type RedisServerHandle } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchedulerService, type SchedulerService } from './service.ts';
import { insertAgent, serveStandInWorker, slotOf } from './testing/stand-in-worker.ts';

// Issue 9 item 8, "exactly once with 2 scheduler processes": two schedulers, each with its own
// BullMQ connection and its own handle on the shared store (as two processes of one host), fire
// five `every` 1 s schedules for 60+ slots. Every slot must reach the agent worker exactly once:
// no slot twice, none skipped. Against a redis-server this test spawns on a free port.
const redisBinary = requireBinary('redis-server');
const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });
const SETTINGS: PlatformConfig['schedules'] = {
  catchup_window_secs: 3600,
  fire_attempts: 5,
  fire_backoff_ms: 1000,
  fire_history_days: 30,
};
const SCHEDULES = 5;
const SLOTS = 60;

describe.skipIf(redisBinary === null)('two scheduler processes on BullMQ', () => {
  let redis: RedisServerHandle;
  let dir: string;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    dir = await mkdtemp(join(tmpdir(), 'ap-exactly-once-'));
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await redis?.dispose();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** One scheduler process: its own queue connection and store handle, the shared bus. */
  async function schedulerProcess(
    bus: Bus,
    prefix: string,
  ): Promise<{ service: ScheduleService; fired: () => number; stop: () => Promise<void> }> {
    const queue: BullmqQueue = await connectBullmqQueue({ redisUrl: redis.url, prefix });
    const store: Store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    const service = createScheduleService({
      store,
      queue,
      agents: createAgentStore(store),
      clock: systemClock,
      settings: () => SETTINGS,
    });
    let fired = 0;
    const counting: Bus = Object.assign(Object.create(bus) as Bus, {
      request: (...args: Parameters<Bus['request']>) => ((fired += 1), bus.request(...args)),
    });
    const scheduler: SchedulerService = createSchedulerService({
      queue,
      bus: counting,
      logger,
      schedules: service,
      requestTimeoutMs: () => 5_000,
    });
    await scheduler.start();
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        await scheduler.stop();
        await queue.close();
        await store.close();
      })());
    closers.push(stop);
    return { service, fired: () => fired, stop };
  }

  it(`fires ${SLOTS}+ slots of ${SCHEDULES} schedules exactly once each`, async () => {
    const bus = createEmbeddedBus();
    closers.push(() => bus.close());
    const seen = await serveStandInWorker(bus);
    const prefix = `once-${randomUUID().slice(0, 8)}`;
    const a = await schedulerProcess(bus, prefix);
    const b = await schedulerProcess(bus, prefix);
    const agentStore = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    closers.push(() => agentStore.close());
    const agent = await insertAgent(createAgentStore(agentStore));

    const ids: string[] = [];
    for (let i = 0; i < SCHEDULES; i++)
      ids.push((await a.service.create(agent.id, { every_secs: 1, prompt: `beat ${i}` }, 'cron')).id);
    const perSchedule = (id: string) =>
      seen.filter((r) => (r.source as { Cron: { schedule_id: string } }).Cron.schedule_id === id);
    await waitUntil(() => ids.every((id) => perSchedule(id).length >= SLOTS / SCHEDULES), {
      timeoutMs: 40_000,
      intervalMs: 50,
      message: `${SLOTS} slots`,
    });
    for (const id of ids) await b.service.setEnabled(id, false);
    // Settled: no fire of any schedule is still running.
    await waitUntil(
      async () =>
        (await Promise.all(ids.map((id) => a.service.fires(id, 500)))).every((l) =>
          l.fires.every((f) => f.outcome !== 'running'),
        ),
      {
        timeoutMs: 10_000,
        message: 'the last fires to settle',
      },
    );

    expect(seen.length).toBeGreaterThanOrEqual(SLOTS);
    for (const id of ids) {
      const slots = perSchedule(id).map((r) => Date.parse(slotOf(r)));
      // No slot twice...
      expect(new Set(slots).size, `schedule ${id}`).toBe(slots.length);
      // ...and none skipped: consecutive seconds from the first to the last.
      const sorted = [...slots].sort((x, y) => x - y);
      expect(sorted.at(-1)! - sorted[0]!, `schedule ${id}`).toBe((sorted.length - 1) * 1000);
      const log = await a.service.fires(id, 500);
      expect(log.missed_slots).toBe(0);
      expect(log.fires.filter((f) => f.outcome === 'fired')).toHaveLength(slots.length);
    }
    // Both processes took part.
    expect(a.fired()).toBeGreaterThan(0);
    expect(b.fired()).toBeGreaterThan(0);
    expect(a.fired() + b.fired()).toBe(seen.length);
  }, 60_000);

  it('after every scheduler was down, fires one catch-up slot and counts the slots in between missed', async () => {
    const bus = createEmbeddedBus();
    closers.push(() => bus.close());
    const seen = await serveStandInWorker(bus);
    const prefix = `catchup-${randomUUID().slice(0, 8)}`;
    const first = await schedulerProcess(bus, prefix);
    const agentStore = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    closers.push(() => agentStore.close());
    const agent = await insertAgent(createAgentStore(agentStore));
    const { id } = await first.service.create(agent.id, { every_secs: 1, prompt: 'catch up' }, 'cron');
    await waitUntil(() => seen.length >= 1, { timeoutMs: 5_000, message: 'a first fire' });

    // Every scheduler stops; four slots pass.
    await first.stop();
    const downAt = Date.now();
    const before = seen.length;
    await waitUntil(() => Date.now() > downAt + 4_500, { timeoutMs: 6_000, message: 'four slots to pass' });
    expect(seen.length).toBe(before);

    const second = await schedulerProcess(bus, prefix);
    await waitUntil(async () => (await second.service.fires(id, 50)).missed_slots > 0, {
      timeoutMs: 6_000,
      message: 'the slots in between to be counted',
    });
    await second.service.setEnabled(id, false);
    const after = seen.slice(before).map((r) => Date.parse(slotOf(r)));
    const late = after.filter((slot) => slot < downAt + 4_500);
    // One catch-up fire for the whole downtime, not one per slot missed.
    expect(late).toHaveLength(1);
    const log = await second.service.fires(id, 50);
    expect(
      log.fires.find((f) => f.outcome === 'fired' && Date.parse(f.slot_at) === late[0])!.late_ms,
    ).toBeGreaterThan(2_000);
    const fired = log.fires.filter((f) => f.outcome === 'fired').length;
    // Every slot since the first fire is accounted for: fired once, or counted missed.
    const span = (Math.max(...after) - Date.parse(slotOf(seen[0]!))) / 1000 + 1;
    expect(fired + log.missed_slots).toBe(span);
    expect(new Set(seen.map(slotOf)).size).toBe(seen.length);
  }, 30_000);
});
