import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queues, Streams, type PlatformConfig, type PlatformEvent, type ScheduleFire } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { createAgentStore, createEventPublisher, createScheduleRegistrar, createScheduleService, Errors, type AgentRecord, type AgentStore, type Clock, type ScheduleService } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import type { Queue } from '@agent-platform/queue';
import { openEmbeddedQueue, type EmbeddedQueue } from '@agent-platform/queue/embedded';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { gate, waitUntil } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fireHandler } from './handlers/fire-handler.ts';
import { NO_SCHEDULE_METRICS } from './schedule-metrics.ts';
import { createSchedulerService, type SchedulerDeps, type SchedulerService } from './service.ts';
import { insertAgent, serveStandInWorker, slotOf } from './testing/stand-in-worker.ts';

// The scheduler over the real embedded queue, store and bus, as the all-in-one runs it; the agent
// worker is a stand-in serving agents.invoke, scripted per test. What a user sees is asserted:
// the requests that reach the worker, the jobs' last_run/next_run and their fire log.
const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });

/** The system clock, which a test may move forward (the scheduler "was down" that long). */
function shiftableClock(): Clock & { shift(ms: number): void } {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), shift: (ms) => void (offset += ms) };
}

let dir: string;
let clock: ReturnType<typeof shiftableClock>;
let settings: PlatformConfig['schedules'];
let store: Store;
let bus: Bus;
let agents: AgentStore;
let agent: AgentRecord;
let queues: EmbeddedQueue[] = [];
let schedulers: SchedulerService[] = [];
let service: ScheduleService;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-scheduler-'));
  clock = shiftableClock();
  settings = { catchup_window_secs: 3600, fire_attempts: 5, fire_backoff_ms: 1000, fire_history_days: 30 };
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => clock.now() });
  bus = createEmbeddedBus();
  agents = createAgentStore(store);
  agent = await insertAgent(agents);
  service = serviceOver(await openQueue());
});
afterEach(async () => {
  for (const s of schedulers) await s.stop();
  for (const q of queues) await q.close();
  await bus.close();
  await store.close();
  schedulers = [];
  queues = [];
  await rm(dir, { recursive: true, force: true });
});

/** Another connection to the one queue file: another scheduler process of the same host. */
async function openQueue(): Promise<EmbeddedQueue> {
  const queue = await openEmbeddedQueue({ path: join(dir, 'queue.db'), pollIntervalMs: 20, clock });
  queues.push(queue);
  return queue;
}

function serviceOver(queue: Queue): ScheduleService {
  return createScheduleService({ store, queue, agents, clock, settings: () => settings });
}

async function startScheduler(queue: Queue, extra: Partial<SchedulerDeps> = {}): Promise<SchedulerService> {
  const scheduler = createSchedulerService({ queue, bus, logger, schedules: serviceOver(queue), requestTimeoutMs: () => 2_000, ...extra });
  await scheduler.start();
  schedulers.push(scheduler);
  return scheduler;
}

const soon = (ms = 50): string => new Date(clock.now().getTime() + ms).toISOString();
const fires = async (id: string) => (await service.fires(id, 100)).fires;
const outcomes = async (id: string) => (await fires(id)).map((f) => f.outcome);

describe('firing', () => {
  it('fires a slot as agents.invoke with a Cron source and the key cron:<schedule>:<slot>, and keeps last_run/next_run true', async () => {
    const seen = await serveStandInWorker(bus);
    await startScheduler(queues[0]!);
    const at = soon();
    const job = await service.create(agent.id, { at, prompt: 'daily FNOL digest' }, 'schedule');
    expect(job.next_run).toBe(at);
    await waitUntil(async () => (await outcomes(job.id)).includes('fired'), { message: 'the fire to be recorded' });
    const key = `cron:${job.id}:${at}`;
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      agent_id: agent.id,
      message: 'daily FNOL digest',
      source: { Cron: { schedule_id: job.id, expression: `at ${at}`, scheduled_at: at } },
      idempotency_key: key,
      correlation_id: key,
      caller: 'system:scheduler',
    });
    const after = await service.get(job.id);
    expect(Date.parse(after.last_run!)).toBeGreaterThanOrEqual(Date.parse(at));
    expect(after.next_run).toBeNull();
    expect((await fires(job.id))[0]).toMatchObject({ slot_at: at, outcome: 'fired', attempts: 1, late_ms: expect.any(Number) });
  });

  it('moves next_run on as an `every` schedule fires, each slot once with two schedulers sharing the queue', async () => {
    const seen = await serveStandInWorker(bus);
    await startScheduler(queues[0]!);
    await startScheduler(await openQueue());
    const job = await service.create(agent.id, { every_secs: 1, prompt: 'tick' }, 'cron');
    await waitUntil(() => seen.length >= 3, { timeoutMs: 6_000, message: 'three slots' });
    await service.setEnabled(job.id, false);
    const slots = seen.map(slotOf);
    expect(new Set(slots).size).toBe(slots.length);
    for (const slot of slots) expect(new Date(slot).getUTCMilliseconds()).toBe(0);
    expect(seen[0]!.source).toMatchObject({ Cron: { expression: 'every 1s' } });
    await service.setEnabled(job.id, true);
    const view = await service.get(job.id);
    expect(Date.parse(view.next_run!)).toBeGreaterThan(Date.parse(view.last_run!));
    expect(Date.parse(view.next_run!) - clock.now().getTime()).toBeLessThanOrEqual(1_000);
  });

  it('does not fire a paused schedule, and fires it again once resumed', async () => {
    const seen = await serveStandInWorker(bus);
    await startScheduler(queues[0]!);
    const paused = await service.create(agent.id, { every_secs: 1, prompt: 'paused' }, 'schedule');
    await service.setEnabled(paused.id, false);
    const marker = await service.create(agent.id, { every_secs: 1, prompt: 'marker' }, 'schedule');
    await waitUntil(() => seen.filter((r) => r.message === 'marker').length >= 3, { timeoutMs: 6_000, message: 'three marker fires' });
    expect(seen.filter((r) => r.message === 'paused')).toEqual([]);
    await service.setEnabled(marker.id, false);
    await service.setEnabled(paused.id, true);
    await waitUntil(() => seen.some((r) => r.message === 'paused'), { timeoutMs: 4_000, message: 'the resumed schedule to fire' });
    expect((await service.fires(paused.id, 10)).missed_slots).toBe(0);
  });

  it('refuses a fire at a Suspended agent (D9) before any invocation, and records it', async () => {
    const seen = await serveStandInWorker(bus);
    await startScheduler(queues[0]!);
    const suspended = await insertAgent(agents, 'Suspended');
    const job = await service.create(suspended.id, { at: soon(), prompt: 'm' }, 'schedule');
    await waitUntil(async () => (await outcomes(job.id)).includes('refused'), { message: 'the refusal to be recorded' });
    expect(await outcomes(job.id)).toEqual(['refused']);
    expect((await fires(job.id))[0]).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/^InvalidState: .*Suspended/) });
    expect(seen).toEqual([]);
    expect((await service.get(job.id)).last_run).toBeNull();
  });

  it('records a refusal from the worker (the agent was suspended meanwhile) and does not retry it', async () => {
    const seen = await serveStandInWorker(bus, [Errors.invalidState('agent claims-intake is Suspended; activate it first', { state: 'Suspended' })]);
    await startScheduler(queues[0]!, { retry: () => ({ attempts: 5, backoffMs: 10 }) });
    const job = await service.create(agent.id, { at: soon(), prompt: 'm' }, 'schedule');
    await waitUntil(async () => (await outcomes(job.id)).includes('refused'), { message: 'the refusal' });
    expect((await fires(job.id))[0]!.reason).toContain('Suspended');
    expect(seen).toHaveLength(1);
    expect(await queues[0]!.failedJobs(Queues.schedules)).toEqual([]);
  });

  it('removes the scheduler of a job that no longer exists when its slot comes', async () => {
    await serveStandInWorker(bus);
    await startScheduler(queues[0]!);
    const registrar = createScheduleRegistrar(queues[0]!);
    await registrar.register({ id: 'ghost', agent_id: agent.id, schedule: { kind: 'every', every_secs: 1 }, message: 'm' });
    await waitUntil(async () => (await queues[0]!.listSchedulers(Queues.schedules)).length === 0, { timeoutMs: 4_000, message: 'the stray scheduler to go' });
  });

  it('registers at start the enabled jobs the queue lost', async () => {
    const seen = await serveStandInWorker(bus);
    const job = await service.create(agent.id, { every_secs: 1, prompt: 'm' }, 'schedule');
    await createScheduleRegistrar(queues[0]!).unregister(job.id);
    await startScheduler(queues[0]!);
    await waitUntil(() => seen.length >= 1, { timeoutMs: 4_000, message: 'the job to fire' });
  });
});

describe('retries', () => {
  it('retries a failed fire with exponential backoff and the same key until it succeeds', async () => {
    // A worker that times out twice, then answers.
    const seen = await serveStandInWorker(bus, [Errors.timeout('the worker was slow'), Errors.timeout('still slow')]);
    await startScheduler(queues[0]!, { retry: () => ({ attempts: 5, backoffMs: 100 }) });
    const at = soon();
    const job = await service.create(agent.id, { at, prompt: 'm' }, 'schedule');
    await waitUntil(async () => (await outcomes(job.id)).includes('fired'), { message: 'the retries' });
    expect(new Set(seen.map((r) => r.idempotency_key))).toEqual(new Set([`cron:${job.id}:${at}`]));
    // The second retry waited about twice as long as the first (100 ms, then 200 ms).
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(190);
    expect((await fires(job.id))[0]).toMatchObject({ outcome: 'fired', attempts: 3 });
  });

  it('gives up after `attempts` fires in total: recorded failed, the failed retry job kept', async () => {
    const seen = await serveStandInWorker(bus, Array.from({ length: 10 }, () => Errors.timeout('still slow')));
    await startScheduler(queues[0]!, { retry: () => ({ attempts: 3, backoffMs: 20 }) });
    const job = await service.create(agent.id, { at: soon(), prompt: 'm' }, 'schedule');
    await waitUntil(async () => (await queues[0]!.failedJobs(Queues.schedules)).length === 1, { message: 'the failed retry job' });
    expect(seen).toHaveLength(3);
    expect((await fires(job.id))[0]).toMatchObject({ outcome: 'failed', attempts: 3, reason: expect.stringContaining('Timeout') });
  });

  it('counts a DuplicateInvocation answer as done: the slot fired once (an earlier delivery ran it), no retry', async () => {
    const seen = await serveStandInWorker(bus, ['duplicate']);
    const queue = queues[0]!;
    const added: unknown[] = [];
    const recording: Queue = Object.assign(Object.create(queue) as Queue, {
      add: async (...args: Parameters<Queue['add']>) => (added.push(args[1]), queue.add(...args)),
    });
    const job = await service.create(agent.id, { every_secs: 3600, prompt: 'm' }, 'schedule');
    const handle = fireHandler({ queue: recording, bus, logger, firing: service.firing, requestTimeoutMs: () => 2_000, retry: () => ({ attempts: 5, backoffMs: 10 }), metrics: NO_SCHEDULE_METRICS, identity: 'test' });
    const slot = new Date(Math.ceil((clock.now().getTime() + 1) / 1000) * 1000).toISOString();
    const fire: ScheduleFire = { schedule_id: job.id, agent_id: agent.id, expression: 'every 3600s', message: 'm' };
    await handle({ id: 'j', queue: Queues.schedules, data: fire, attempt: 1, scheduler_id: job.id, slot_at: slot });
    expect(seen).toHaveLength(1);
    expect(added).toEqual([]);
    expect(await fires(job.id)).toEqual([expect.objectContaining({ outcome: 'fired', reason: expect.stringContaining('it ran once') })]);
  });

  it('stop waits for a running fire to be answered', async () => {
    const held = gate();
    const seen = await serveStandInWorker(bus, [held.promise]);
    const scheduler = await startScheduler(queues[0]!);
    const job = await service.create(agent.id, { at: soon(), prompt: 'm' }, 'schedule');
    await waitUntil(() => seen.length === 1, { message: 'the fire to start' });
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    held.open();
    await stopping;
    expect(await outcomes(job.id)).toEqual(['fired']);
    schedulers = [];
  });
});

describe('catch-up after downtime', () => {
  /** Creates an `every` 60 s job, stops every scheduler, and moves time on past nine slots plus 30 s. */
  async function downPastNineSlots(): Promise<{ id: string; lastSlot: number }> {
    const queue = queues[0]!;
    const job = await service.create(agent.id, { every_secs: 60, prompt: 'catch me up' }, 'schedule');
    const firstSlot = Date.parse(job.next_run!);
    await queue.close();
    clock.shift(firstSlot + 8 * 60_000 + 30_000 - clock.now().getTime());
    return { id: job.id, lastSlot: firstSlot + 8 * 60_000 };
  }

  it('fires one catch-up slot (the latest) within the window and counts the others missed', async () => {
    const seen = await serveStandInWorker(bus);
    const { id, lastSlot } = await downPastNineSlots();
    await startScheduler(await openQueue());
    await waitUntil(async () => (await outcomes(id)).includes('fired'), { message: 'the catch-up fire' });
    expect(seen.map(slotOf)).toEqual([new Date(lastSlot).toISOString()]);
    const list = await service.fires(id, 10);
    expect(list.missed_slots).toBe(8);
    expect(list.fires.map((f) => [f.outcome, f.missed_count])).toEqual(expect.arrayContaining([['fired', 0], ['missed', 8]]));
    expect(list.fires.find((f) => f.outcome === 'fired')!.late_ms).toBeGreaterThanOrEqual(30_000);
  });

  it('emits schedule.missed (the gap) and schedule.fired (the slot) once each, keyed by schedule and slot (docs/events.md)', async () => {
    const events: PlatformEvent[] = [];
    await bus.consume<PlatformEvent>(Streams.platformEvents, { durable: 'test-events', maxDeliver: 1, backoffMs: [0] }, async (e) => void events.push(e.data));
    await serveStandInWorker(bus);
    const { id, lastSlot } = await downPastNineSlots();
    await startScheduler(await openQueue(), { events: createEventPublisher({ bus, clock, warn: () => undefined }) });
    await waitUntil(() => events.some((e) => e.kind === 'schedule.fired'), { message: 'the schedule.fired event' });
    const slot = new Date(lastSlot).toISOString();
    expect(events.map((e) => [e.id, e.kind, e.agent_id, e.data])).toEqual([
      [`schedule.missed:${id}:${slot}`, 'schedule.missed', agent.id, { schedule_id: id, slot_at: slot, missed: 8 }],
      [`schedule.fired:${id}:${slot}`, 'schedule.fired', agent.id, { schedule_id: id, slot_at: slot, expression: expect.any(String) }],
    ]);
  });

  it('fires nothing when even the latest missed slot is older than the window: all counted missed', async () => {
    settings.catchup_window_secs = 10;
    const seen = await serveStandInWorker(bus);
    const { id } = await downPastNineSlots();
    await startScheduler(await openQueue());
    await waitUntil(async () => (await service.fires(id, 10)).missed_slots === 9, { message: 'nine missed slots' });
    expect(seen).toEqual([]);
    expect(await service.get(id)).toMatchObject({ last_run: null });
  });
});

describe('overlap policy', () => {
  it('skips the slots that come while the previous fire still runs (skip, the default)', async () => {
    const held = gate();
    const seen = await serveStandInWorker(bus, [held.promise]);
    await startScheduler(queues[0]!);
    const job = await service.create(agent.id, { every_secs: 1, prompt: 'long report' }, 'schedule');
    await waitUntil(async () => (await outcomes(job.id)).includes('skipped_overlap'), { timeoutMs: 5_000, message: 'a skipped slot' });
    expect(seen).toHaveLength(1);
    held.open();
    await waitUntil(() => seen.length >= 2, { timeoutMs: 4_000, message: 'the next fire after the long one ended' });
    await service.setEnabled(job.id, false);
    const skipped = (await fires(job.id)).find((f) => f.outcome === 'skipped_overlap')!;
    expect(skipped.reason).toContain(slotOf(seen[0]!));
    expect(seen.map(slotOf)).not.toContain(skipped.slot_at);
  });

  it('fires overlapping slots with overlap allow', async () => {
    const held = gate();
    const seen = await serveStandInWorker(bus, [held.promise]);
    await startScheduler(queues[0]!);
    await service.create(agent.id, { every_secs: 1, prompt: 'parallel', overlap: 'allow' }, 'schedule');
    await waitUntil(() => seen.length >= 2, { timeoutMs: 5_000, message: 'a second fire while the first runs' });
    held.open();
  });
});
