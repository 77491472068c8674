import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queues, type PlatformConfig } from '@agent-platform/contracts';
import type { Queue } from '@agent-platform/queue';
import { openEmbeddedQueue } from '@agent-platform/queue/embedded';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRecord } from '../agents/agent-record.ts';
import { createAgentStore, type AgentStore } from '../agents/agent-store.ts';
import { PlatformError } from '../errors/platform-error.ts';
import { fixedClock } from '../time/clock.ts';
import { agentFixture } from '../testing/agent-fixture.ts';
import { createScheduleRegistrar } from './schedule-registrar.ts';
import { createScheduleService, type ScheduleService } from './schedule-service.ts';

// The schedule service over the real embedded store and queue: what is stored and what is on the
// queue after each operation, including the failures that must change nothing.
const T0 = '2030-01-01T00:00:00.000Z';
const SETTINGS: PlatformConfig['schedules'] = {
  catchup_window_secs: 3600,
  fire_attempts: 5,
  fire_backoff_ms: 1000,
  fire_history_days: 30,
};

let dir: string;
let store: Store;
let queue: Queue;
let agents: AgentStore;
let clock: ReturnType<typeof fixedClock>;
let service: ScheduleService;
let agent: AgentRecord;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-schedules-'));
  clock = fixedClock(T0);
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => clock.now() });
  queue = await openEmbeddedQueue({ path: join(dir, 'queue.db'), clock });
  agents = createAgentStore(store);
  agent = await agents.insert(agentFixture({}, T0));
  service = createScheduleService({ store, queue, agents, clock, settings: () => SETTINGS });
});
afterEach(async () => {
  await queue.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});


const schedulerIds = async (): Promise<string[]> =>
  (await queue.listSchedulers(Queues.schedules)).map((s) => s.id);

async function refusal(promise: Promise<unknown>): Promise<{ category: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PlatformError) return { category: error.category, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('creating', () => {
  it('stores the spec CronJob and registers it on queue `schedules`', async () => {
    const job = await service.create(
      agent.id,
      { expression: '0 9 * * 1-5', tz: 'Europe/Paris', prompt: 'FNOL digest' },
      'schedule',
    );
    expect(job).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      agent_id: agent.id,
      name: 'schedule',
      enabled: true,
      schedule: { kind: 'cron', expr: '0 9 * * 1-5', tz: 'Europe/Paris' },
      action: { kind: 'agent_turn', message: 'FNOL digest', model_override: null, timeout_secs: null },
      created_at: T0,
      last_run: null,
      // 2030-01-01 is a Tuesday; 09:00 in Paris is 08:00 UTC.
      next_run: '2030-01-01T08:00:00.000Z',
    });
    expect(await schedulerIds()).toEqual([job.id]);
    const [registered] = await queue.listSchedulers(Queues.schedules);
    expect(registered!.repeat).toEqual({ kind: 'cron', expr: '0 9 * * 1-5', tz: 'Europe/Paris' });
  });

  it('takes every_secs or at instead of expression', async () => {
    const every = await service.create(agent.id, { every_secs: 90, prompt: 'p' }, 'cron');
    expect(every).toMatchObject({
      name: 'cron',
      schedule: { kind: 'every', every_secs: 90 },
      next_run: '2030-01-01T00:01:30.000Z',
    });
    const at = await service.create(agent.id, { at: '2030-01-02T10:00:00+02:00', prompt: 'p' }, 'schedule');
    expect(at).toMatchObject({
      schedule: { kind: 'at', at: '2030-01-02T08:00:00.000Z' },
      next_run: '2030-01-02T08:00:00.000Z',
    });
    expect((await schedulerIds()).sort()).toEqual([every.id, at.id].sort());
  });

  it('refuses bad schedules with ValidationError naming the problem, storing and registering nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ expression: '* * * *' }, '* * * *'],
      [{ expression: '* * * * * * *' }, 'expected 5 or 6 fields'],
      [{ expression: 'every tuesday at nine' }, 'every tuesday'],
      [{ expression: '61 * * * *' }, '61 * * * *'],
      [{ expression: '0 9 * * *', tz: 'Mars/Olympus' }, 'Mars/Olympus'],
      [{ expression: '0 9 * * *', tz: '+01:00' }, '+01:00'],
      [{}, "'expression'"],
      [{ expression: '0 9 * * *', every_secs: 60 }, 'exactly one'],
      [{ every_secs: 60, tz: 'UTC' }, "'tz'"],
      [{ at: 'tomorrow' }, 'tomorrow'],
      [{ at: '2030-02-30' }, '2030-02-30'],
    ];
    for (const [input, named] of cases) {
      const refused = await refusal(service.create(agent.id, { prompt: 'p', ...input }, 'schedule'));
      expect(refused.category, JSON.stringify(input)).toBe('ValidationError');
      expect(refused.message, JSON.stringify(input)).toContain(named);
    }
    expect(await service.list()).toEqual([]);
    expect(await schedulerIds()).toEqual([]);
  });

  it('refuses an unknown agent (404) and a malformed agent id (400 naming the id kind)', async () => {
    expect(
      await refusal(service.create(randomUUID(), { every_secs: 60, prompt: 'p' }, 'cron')),
    ).toMatchObject({ category: 'NotFound' });
    expect(await refusal(service.create('nope', { every_secs: 60, prompt: 'p' }, 'cron'))).toMatchObject({
      category: 'ValidationError',
      message: expect.stringContaining('invalid agent id'),
    });
    expect(await service.list()).toEqual([]);
  });

  it('takes nothing back when the queue refuses: the record is removed again', async () => {
    const broken = Object.assign(Object.create(queue) as Queue, {
      upsertScheduler: () => Promise.reject(new Error('redis is down')),
    });
    const failing = createScheduleService({ store, queue: broken, agents, clock, settings: () => SETTINGS });
    expect(await refusal(failing.create(agent.id, { every_secs: 60, prompt: 'p' }, 'cron'))).toMatchObject({
      category: 'Internal',
      message: 'the schedule queue is unavailable',
    });
    expect(await service.list()).toEqual([]);
  });
});

describe('one store for both surfaces', () => {
  it('lists jobs created through either surface, per agent and across agents', async () => {
    const other = await agents.insert(agentFixture({ state: 'Suspended' }, T0));
    const a = await service.create(agent.id, { every_secs: 60, prompt: 'a' }, 'schedule');
    clock.advance(1);
    const b = await service.create(agent.id, { expression: '*/5 * * * *', prompt: 'b' }, 'cron');
    clock.advance(1);
    const c = await service.create(other.id, { every_secs: 120, prompt: 'c' }, 'cron');
    expect((await service.list(agent.id)).map((j) => j.id)).toEqual([a.id, b.id]);
    expect((await service.list()).map((j) => j.id)).toEqual([a.id, b.id, c.id]);
    expect(await refusal(service.list(randomUUID()))).toMatchObject({ category: 'NotFound' });
  });
});

describe('enabling, disabling and deleting', () => {
  it('takes the scheduler off the queue while disabled and puts it back when enabled', async () => {
    const job = await service.create(agent.id, { every_secs: 60, prompt: 'p' }, 'schedule');
    const paused = await service.setEnabled(job.id, false);
    expect(paused).toMatchObject({ enabled: false, next_run: null });
    expect(await schedulerIds()).toEqual([]);
    clock.advance(10 * 60_000);
    const resumed = await service.setEnabled(job.id, true);
    expect(resumed).toMatchObject({ enabled: true, next_run: '2030-01-01T00:11:00.000Z' });
    expect(await schedulerIds()).toEqual([job.id]);
    // Idempotent both ways.
    expect((await service.setEnabled(job.id, true)).enabled).toBe(true);
    expect(await schedulerIds()).toEqual([job.id]);
  });

  it('deletes the record and its scheduler; unknown ids are 404 naming the noun', async () => {
    const job = await service.create(agent.id, { every_secs: 60, prompt: 'p' }, 'schedule');
    await service.delete(job.id);
    expect(await service.list()).toEqual([]);
    expect(await schedulerIds()).toEqual([]);
    expect(await refusal(service.delete(job.id, 'cron job'))).toEqual({
      category: 'NotFound',
      message: `cron job '${job.id}' not found`,
    });
    expect(await refusal(service.setEnabled(randomUUID(), false, 'condition job'))).toMatchObject({
      category: 'NotFound',
      message: expect.stringContaining('condition job'),
    });
  });

  it('reconciles the queue with the store at boot: missing schedulers registered, stray ones removed', async () => {
    const kept = await service.create(agent.id, { every_secs: 60, prompt: 'p' }, 'schedule');
    const off = await service.create(agent.id, { every_secs: 60, prompt: 'p' }, 'schedule');
    await service.setEnabled(off.id, false);
    const registrar = createScheduleRegistrar(queue);
    await registrar.unregister(kept.id);
    await registrar.register({
      id: off.id,
      agent_id: agent.id,
      schedule: { kind: 'every', every_secs: 60 },
      message: 'p',
    });
    await registrar.register({
      id: 'stray',
      agent_id: agent.id,
      schedule: { kind: 'every', every_secs: 60 },
      message: 'p',
    });
    expect(await service.reconcile()).toEqual({ registered: 1, removed: 2 });
    expect(await schedulerIds()).toEqual([kept.id]);
  });
});
