import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueGroups, Queues, Subjects, type AgentInvokeReply, type AgentInvokeRequest, type ScheduleFire } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { createScheduleRegistrar, Errors, systemClock, type ScheduleRegistrar } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import type { Queue } from '@agent-platform/queue';
import { openEmbeddedQueue, type EmbeddedQueue } from '@agent-platform/queue/embedded';
import { waitUntil } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fireHandler } from './handlers/fire-handler.ts';
import { createSchedulerService, type SchedulerDeps, type SchedulerService } from './service.ts';

// The scheduler over the real embedded queue and bus; the agent worker is a stand-in serving
// agents.invoke, scripted per test (the invocation itself is tested in libs/domain and apps/platform).
const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });
let dir: string;
let bus: Bus;
let queues: EmbeddedQueue[] = [];
let schedulers: SchedulerService[] = [];
let registrar: ScheduleRegistrar;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-scheduler-'));
  bus = createEmbeddedBus();
  registrar = createScheduleRegistrar(await openQueue());
});
afterEach(async () => {
  for (const s of schedulers) await s.stop();
  for (const q of queues) await q.close();
  await bus.close();
  schedulers = [];
  queues = [];
  await rm(dir, { recursive: true, force: true });
});

/** Another connection to the one queue file: another scheduler process of the same host. */
async function openQueue(): Promise<EmbeddedQueue> {
  const queue = await openEmbeddedQueue({ path: join(dir, 'queue.db'), pollIntervalMs: 20 });
  queues.push(queue);
  return queue;
}

async function startScheduler(queue: Queue, extra: Partial<SchedulerDeps> = {}): Promise<SchedulerService> {
  const scheduler = createSchedulerService({ queue, bus, logger, clock: systemClock, requestTimeoutMs: () => 2_000, ...extra });
  await scheduler.start();
  schedulers.push(scheduler);
  return scheduler;
}

type Outcome = 'ok' | 'duplicate' | Error;

/** A stand-in agent worker: records each request and answers from `script` (then 'ok'). */
async function serveWorker(script: Outcome[] = []): Promise<Array<AgentInvokeRequest & { at: number }>> {
  const seen: Array<AgentInvokeRequest & { at: number }> = [];
  await bus.serve<AgentInvokeRequest, AgentInvokeReply>(
    Subjects.agentInvoke,
    async (request) => {
      seen.push({ ...request, at: Date.now() });
      const outcome = script.shift() ?? 'ok';
      if (outcome instanceof Error) throw outcome;
      return {
        result: { content: 'done', tokens_used: 1, duration_ms: 1, correlation_id: request.correlation_id, source: request.source, tool_calls: [], usage: { input_tokens: 1, output_tokens: 0 } },
        duplicate: outcome === 'duplicate',
      };
    },
    { queue: QueueGroups.agentWorkers },
  );
  return seen;
}

const AGENT = '6f1d2c3b-0a4e-4c5d-9e8f-7a6b5c4d3e2f';
const soon = (): string => new Date(Date.now() + 50).toISOString();

describe('scheduler service', () => {
  it('fires a slot as agents.invoke with a Cron source and the key cron:<schedule>:<slot>', async () => {
    const seen = await serveWorker();
    await startScheduler(queues[0]!);
    const at = soon();
    await registrar.register({ id: 'sched-1', agent_id: AGENT, schedule: { kind: 'at', at }, message: 'daily FNOL digest' });
    await waitUntil(() => seen.length === 1, { message: 'the fire' });
    const key = `cron:sched-1:${at}`;
    expect(seen[0]).toMatchObject({
      agent_id: AGENT,
      message: 'daily FNOL digest',
      source: { Cron: { schedule_id: 'sched-1', expression: `at ${at}`, scheduled_at: at } },
      idempotency_key: key,
      correlation_id: key,
    });
  });

  it('fires each slot of an `every` schedule once, with two schedulers sharing the queue', async () => {
    const seen = await serveWorker();
    await startScheduler(queues[0]!);
    await startScheduler(await openQueue());
    await registrar.register({ id: 'beat', agent_id: AGENT, schedule: { kind: 'every', every_secs: 1 }, message: 'tick' });
    await waitUntil(() => seen.length >= 2, { timeoutMs: 5_000, message: 'two slots' });
    await registrar.unregister('beat');
    const slots = seen.map((r) => (r.source as { Cron: { scheduled_at: string } }).Cron.scheduled_at);
    expect(new Set(slots).size).toBe(slots.length);
    for (const slot of slots) expect(new Date(slot).getUTCMilliseconds()).toBe(0);
    expect(seen[0]!.source).toMatchObject({ Cron: { expression: 'every 1s' } });
  });

  it('retries a failed fire with exponential backoff and the same key until it succeeds', async () => {
    // No worker at first (no responders), then one that times out once, then success.
    await startScheduler(queues[0]!, { retry: { attempts: 5, backoffMs: 100 } });
    const at = soon();
    await registrar.register({ id: 'flaky', agent_id: AGENT, schedule: { kind: 'at', at }, message: 'm' });
    await waitUntil(async () => (await queues[0]!.listSchedulers(Queues.schedules))[0]?.next_at === null, { message: 'the slot to be taken' });
    const seen = await serveWorker([Errors.timeout('the worker was slow')]);
    await waitUntil(() => seen.length === 2, { message: 'the retries' });
    const keys = new Set(seen.map((r) => r.idempotency_key));
    expect(keys).toEqual(new Set([`cron:flaky:${at}`]));
    // The second retry waited about twice as long as the first (100 ms, then 200 ms).
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(190);
  });

  it('gives up after `attempts` fires in total, keeping the failed retry job', async () => {
    const seen = await serveWorker(Array.from({ length: 10 }, () => Errors.timeout('still slow')));
    await startScheduler(queues[0]!, { retry: { attempts: 3, backoffMs: 20 } });
    await registrar.register({ id: 'doomed', agent_id: AGENT, schedule: { kind: 'at', at: soon() }, message: 'm' });
    await waitUntil(async () => (await queues[0]!.failedJobs(Queues.schedules)).length === 1, { message: 'the failed retry job' });
    expect(seen).toHaveLength(3);
  });

  it('counts a DuplicateInvocation answer as done: no retry', async () => {
    const seen = await serveWorker(['duplicate']);
    const added: string[] = [];
    const queue = queues[0]!;
    const recording: Queue = Object.assign(Object.create(queue) as Queue, {
      add: async (...args: Parameters<Queue['add']>) => (added.push(args[1] as string), queue.add(...args)),
    });
    const handle = fireHandler({ queue: recording, bus, clock: systemClock, logger, requestTimeoutMs: () => 2_000, retry: { attempts: 5, backoffMs: 10 } });
    const fire: ScheduleFire = { schedule_id: 's', agent_id: AGENT, expression: '* * * * *', message: 'm' };
    await handle({ id: 'j', queue: Queues.schedules, data: fire, attempt: 1, scheduler_id: 's', slot_at: '2026-01-01T00:00:00.000Z' });
    expect(seen).toHaveLength(1);
    expect(added).toEqual([]);
  });

  it('does not retry a refusal (unknown or Suspended agent): the answer would not change', async () => {
    const seen = await serveWorker([Errors.notFound('agent', AGENT), Errors.invalidState('agent is Suspended', { state: 'Suspended' })]);
    const added: unknown[] = [];
    const queue = queues[0]!;
    const recording: Queue = Object.assign(Object.create(queue) as Queue, {
      add: async (...args: Parameters<Queue['add']>) => (added.push(args), queue.add(...args)),
    });
    const handle = fireHandler({ queue: recording, bus, clock: systemClock, logger, requestTimeoutMs: () => 2_000, retry: { attempts: 5, backoffMs: 10 } });
    const fire: ScheduleFire = { schedule_id: 's', agent_id: AGENT, expression: '* * * * *', message: 'm' };
    const slotJob = { id: 'j', queue: Queues.schedules, data: fire, attempt: 1, scheduler_id: 's', slot_at: '2026-01-01T00:00:00.000Z' };
    await handle(slotJob);
    await handle({ ...slotJob, slot_at: '2026-01-01T00:01:00.000Z' });
    expect(seen).toHaveLength(2);
    expect(added).toEqual([]);
  });

  it('stop waits for a running fire to be answered', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const answered: string[] = [];
    await bus.serve<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, async (request) => {
      await held;
      answered.push(request.correlation_id);
      return { result: { content: '', tokens_used: 0, duration_ms: 0, correlation_id: request.correlation_id, source: request.source, tool_calls: [], usage: { input_tokens: 0, output_tokens: 0 } }, duplicate: false };
    });
    let fired = false;
    const scheduler = await startScheduler(queues[0]!, {
      bus: Object.assign(Object.create(bus) as Bus, {
        request: (...args: Parameters<Bus['request']>) => ((fired = true), bus.request(...args)),
      }),
    });
    await registrar.register({ id: 'slow', agent_id: AGENT, schedule: { kind: 'at', at: soon() }, message: 'm' });
    await waitUntil(() => fired, { message: 'the fire to start' });
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(answered).toHaveLength(1);
    schedulers = [];
  });
});
