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
import { fixedClock } from '../time/clock.ts';
import { agentFixture } from '../testing/agent-fixture.ts';
import { cronJobs } from './cron-job-record.ts';
import type { ScheduleInput } from './schedule-input.ts';
import { createScheduleService, type ScheduleService } from './schedule-service.ts';

// The firing protocol the scheduler follows for every slot the queue hands it, on the real
// embedded store, with time moved by hand: claims, catch-up, missed slots, overlap, refusals.
const T0 = '2030-01-01T00:00:00.000Z';
const MIN = 60_000;
const LEASE = 10 * MIN;

let dir: string;
let store: Store;
let queue: Queue;
let agents: AgentStore;
let clock: ReturnType<typeof fixedClock>;
let settings: PlatformConfig['schedules'];
let service: ScheduleService;
let agent: AgentRecord;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-firing-'));
  clock = fixedClock(T0);
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => clock.now() });
  queue = await openEmbeddedQueue({ path: join(dir, 'queue.db'), clock });
  agents = createAgentStore(store);
  agent = await agents.insert(agentFixture({}, T0));
  settings = { catchup_window_secs: 3600, fire_attempts: 5, fire_backoff_ms: 1000, fire_history_days: 30 };
  service = createScheduleService({ store, queue, agents, clock, settings: () => settings });
});
afterEach(async () => {
  await queue.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});


const at = (ms: number): string => new Date(Date.parse(T0) + ms).toISOString();
const create = (input: Omit<ScheduleInput, 'prompt'> = { every_secs: 60 }) =>
  service.create(agent.id, { prompt: 'nightly check', ...input }, 'schedule');
const begin = (id: string, slotAt: string, retry = false) =>
  service.firing.begin({ schedule_id: id, slot_at: slotAt, retry, leaseMs: LEASE });
const fires = async (id: string) => (await service.fires(id, 50)).fires;
const outcomes = async (id: string) => (await fires(id)).map((f) => f.outcome);

describe('an on-time slot', () => {
  it('fires once: claimed, recorded, last_run and next_run true, and a second delivery is a duplicate', async () => {
    const job = await create();
    clock.set(at(MIN + 20));
    const decision = await begin(job.id, at(MIN));
    expect(decision).toEqual({
      kind: 'fire',
      slot_at: at(MIN),
      agent_id: agent.id,
      message: 'nightly check',
      expression: 'every 60s',
      late_ms: 20,
      missed: 0,
    });
    expect(await fires(job.id)).toMatchObject([
      { slot_at: at(MIN), outcome: 'running', trigger: 'schedule', late_ms: 20, attempts: 1 },
    ]);
    expect(await service.get(job.id)).toMatchObject({ last_run: at(MIN + 20), next_run: at(2 * MIN) });
    // The record itself is kept true too (another reader of the store sees the same).
    expect((await cronJobs(store).get(job.id))!.doc).toMatchObject({
      last_run: at(MIN + 20),
      next_run: at(2 * MIN),
      last_slot: at(MIN),
    });

    clock.advance(500);
    await service.firing.finish(job.id, at(MIN), { outcome: 'fired', reason: null, attempts: 1 });
    expect(await fires(job.id)).toMatchObject([{ outcome: 'fired', finished_at: at(MIN + 520) }]);

    clock.advance(1000);
    expect(await begin(job.id, at(MIN))).toMatchObject({
      kind: 'recorded',
      outcome: 'duplicate',
      reason: 'slot already handled (fired)',
    });
    expect((await fires(job.id)).map((f) => f.outcome)).toEqual(['duplicate', 'fired']);
  });

  it('fires again, under the same slot, when delivered again while still claimed (a stalled job run again)', async () => {
    const job = await create();
    clock.set(at(MIN));
    expect(await begin(job.id, at(MIN))).toMatchObject({ kind: 'fire', slot_at: at(MIN) });
    clock.advance(30_000);
    expect(await begin(job.id, at(MIN))).toMatchObject({ kind: 'fire', slot_at: at(MIN), missed: 0 });
    expect(await fires(job.id)).toHaveLength(1);
  });

  it('resolves a claimed slot delivered again after the job was paused: it came while the job was enabled', async () => {
    const job = await create();
    clock.set(at(MIN));
    expect(await begin(job.id, at(MIN))).toMatchObject({ kind: 'fire' });
    await service.setEnabled(job.id, false);
    clock.advance(45_000);
    expect(await begin(job.id, at(MIN))).toMatchObject({ kind: 'fire', slot_at: at(MIN), late_ms: 45_000 });
    await service.firing.finish(job.id, at(MIN), { outcome: 'fired', reason: null, attempts: 1 });
    expect(await outcomes(job.id)).toEqual(['fired']);
  });

  it('refuses a Suspended or unknown agent (D9) and records why, never silently', async () => {
    const job = await create();
    await agents.update(agent.id, (a) => ({ ...a, state: 'Suspended', running_since: null }));
    clock.set(at(MIN));
    const refused = await begin(job.id, at(MIN));
    expect(refused).toMatchObject({
      kind: 'recorded',
      outcome: 'refused',
      reason: expect.stringContaining('InvalidState'),
    });
    expect(refused.kind === 'recorded' && refused.reason).toContain('Suspended');
    await agents.delete(agent.id);
    clock.set(at(2 * MIN));
    expect(await begin(job.id, at(2 * MIN))).toMatchObject({
      kind: 'recorded',
      outcome: 'refused',
      reason: expect.stringContaining('NotFound'),
    });
    expect((await fires(job.id)).map((f) => [f.slot_at, f.outcome])).toEqual([
      [at(2 * MIN), 'refused'],
      [at(MIN), 'refused'],
    ]);
    expect((await service.get(job.id)).last_run).toBeNull();
  });

  it('hands an unknown job back as an orphan (its scheduler is removed by the caller)', async () => {
    expect(await begin(randomUUID(), at(MIN))).toEqual({ kind: 'orphan', missed: 0 });
  });
});

describe('missed slots and catch-up', () => {
  it('counts the slots between the last one handled and a later one as missed, in one entry', async () => {
    const job = await create();
    clock.set(at(5 * MIN));
    expect(await begin(job.id, at(5 * MIN))).toMatchObject({ kind: 'fire', missed: 4 });
    const list = await service.fires(job.id, 50);
    expect(list.missed_slots).toBe(4);
    expect(list.fires.find((f) => f.outcome === 'missed')).toMatchObject({
      slot_at: at(MIN),
      missed_until: at(4 * MIN),
      missed_count: 4,
    });
  });

  it('after a downtime, fires the latest slot within the catch-up window once and counts the rest missed', async () => {
    const job = await create();
    // The queue hands over the oldest pending slot (BullMQ) three hours late.
    clock.set(at(180 * MIN + 5_000));
    expect(await begin(job.id, at(MIN))).toMatchObject({
      kind: 'fire',
      slot_at: at(180 * MIN),
      late_ms: 5_000,
      missed: 179,
    });
    expect((await service.fires(job.id, 50)).missed_slots).toBe(179);
    // The slot itself, delivered again later, is not fired: a later one was.
    expect(await begin(job.id, at(180 * MIN))).toMatchObject({ kind: 'fire', slot_at: at(180 * MIN) });
    await service.firing.finish(job.id, at(180 * MIN), { outcome: 'fired', reason: null, attempts: 1 });
    expect(await begin(job.id, at(180 * MIN))).toMatchObject({ kind: 'recorded', outcome: 'duplicate' });
  });

  it('counts a slot found later than the window, with none later inside it, as missed', async () => {
    settings.catchup_window_secs = 3600;
    const job = await create({ expression: '0 9 * * *' });
    // Down from before 09:00 on day 1 until 14:00 on day 3: the last slot (day 3, 09:00) is 5 h old.
    clock.set('2030-01-03T14:00:00.000Z');
    const decision = await begin(job.id, '2030-01-01T09:00:00.000Z');
    expect(decision).toMatchObject({
      kind: 'recorded',
      outcome: 'missed',
      reason: expect.stringContaining('catchup_window_secs'),
    });
    expect(await begin(job.id, '2030-01-03T09:00:00.000Z')).toMatchObject({
      kind: 'recorded',
      outcome: 'missed',
      missed: 2,
    });
    expect((await service.fires(job.id, 50)).missed_slots).toBe(3);
    expect(await service.get(job.id)).toMatchObject({ last_run: null, next_run: '2030-01-04T09:00:00.000Z' });
  });
});

describe('overlap policy', () => {
  it('skips a slot while the previous fire runs (skip, the default), and fires again once it ended', async () => {
    const job = await create();
    clock.set(at(MIN));
    expect(await begin(job.id, at(MIN))).toMatchObject({ kind: 'fire' });
    clock.set(at(2 * MIN));
    expect(await begin(job.id, at(2 * MIN))).toMatchObject({
      kind: 'recorded',
      outcome: 'skipped_overlap',
      reason: expect.stringContaining(at(MIN)),
    });
    await service.firing.finish(job.id, at(MIN), { outcome: 'fired', reason: null, attempts: 1 });
    clock.set(at(3 * MIN));
    expect(await begin(job.id, at(3 * MIN))).toMatchObject({ kind: 'fire', missed: 0 });
    expect((await fires(job.id)).map((f) => f.outcome)).toEqual(['running', 'skipped_overlap', 'fired']);
  });

  it('fires overlapping slots with overlap allow, and after a crashed fire lease has passed with skip', async () => {
    const allow = await service.create(agent.id, { every_secs: 60, prompt: 'p', overlap: 'allow' }, 'cron');
    const skip = await create();
    clock.set(at(MIN));
    for (const id of [allow.id, skip.id]) expect(await begin(id, at(MIN))).toMatchObject({ kind: 'fire' });
    clock.set(at(2 * MIN));
    expect(await begin(allow.id, at(2 * MIN))).toMatchObject({ kind: 'fire' });
    // The first fire's scheduler died: its lease (LEASE) ends, and the job fires again.
    clock.set(at(MIN + LEASE + 1));
    expect(await begin(skip.id, at(11 * MIN))).toMatchObject({ kind: 'fire', slot_at: at(11 * MIN) });
  });
});

describe('paused jobs', () => {
  it('records a slot delivered while paused, or from before the resume, as skipped_paused', async () => {
    const job = await create();
    await service.setEnabled(job.id, false);
    clock.set(at(MIN));
    expect(await begin(job.id, at(MIN))).toMatchObject({ kind: 'recorded', outcome: 'skipped_paused' });
    clock.set(at(2 * MIN + 30_000));
    await service.setEnabled(job.id, true);
    expect(await begin(job.id, at(2 * MIN))).toMatchObject({ kind: 'recorded', outcome: 'skipped_paused' });
    // Slots of the paused time are never counted missed.
    clock.set(at(3 * MIN));
    expect(await begin(job.id, at(3 * MIN))).toMatchObject({ kind: 'fire', missed: 0 });
  });

  it('fires a retried slot its first scheduler lost before claiming it, with an entry of its own', async () => {
    const job = await create({ every_secs: 60, overlap: 'allow' });
    // The scheduler that took the 1-minute slot died before its claim; the 2-minute slot fired
    // meanwhile and counted the first one missed; then the queue's retry of the lost one comes.
    clock.set(at(2 * MIN));
    expect(await begin(job.id, at(2 * MIN))).toMatchObject({ kind: 'fire', missed: 1 });
    clock.set(at(2 * MIN + 15_000));
    expect(await begin(job.id, at(MIN), true)).toMatchObject({ kind: 'fire', slot_at: at(MIN), missed: 0 });
    expect((await fires(job.id)).filter((f) => f.slot_at === at(MIN))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ outcome: 'running', trigger: 'schedule', late_ms: MIN + 15_000 }),
        expect.objectContaining({ outcome: 'missed', missed_count: 1 }),
      ]),
    );
    // Paused before such a retry came: recorded skipped, not fired and not silently dropped.
    await service.setEnabled(job.id, false);
    expect(await begin(job.id, at(3 * MIN), true)).toMatchObject({ kind: 'recorded', outcome: 'skipped_paused' });
    expect((await fires(job.id)).filter((f) => f.slot_at === at(3 * MIN)).map((f) => f.outcome)).toEqual([
      'skipped_paused',
    ]);
  });

  it('stops retrying a fire whose job was paused meanwhile', async () => {
    const job = await create();
    clock.set(at(MIN));
    await begin(job.id, at(MIN));
    await service.firing.retrying(job.id, at(MIN), 1, 'Timeout: slow', LEASE);
    await service.setEnabled(job.id, false);
    expect(await begin(job.id, at(MIN), true)).toMatchObject({ kind: 'recorded', outcome: 'skipped_paused' });
  });
});

describe('an `at` job', () => {
  it('fires its one slot, then shows no next_run and is not put back on the queue when resumed', async () => {
    const job = await create({ at: at(30 * MIN) });
    clock.set(at(30 * MIN));
    expect(await begin(job.id, at(30 * MIN))).toMatchObject({
      kind: 'fire',
      expression: `at ${at(30 * MIN)}`,
    });
    await service.firing.finish(job.id, at(30 * MIN), { outcome: 'fired', reason: null, attempts: 1 });
    expect(await service.get(job.id)).toMatchObject({
      enabled: true,
      next_run: null,
      last_run: at(30 * MIN),
    });
    await service.setEnabled(job.id, false);
    await service.setEnabled(job.id, true);
    expect(await queue.listSchedulers(Queues.schedules)).toEqual([]);
  });

  it('fires a slot that passed while paused when resumed, late from the resume', async () => {
    const job = await create({ at: at(30 * MIN) });
    await service.setEnabled(job.id, false);
    clock.set(at(5 * 60 * MIN));
    await service.setEnabled(job.id, true);
    clock.advance(100);
    expect(await begin(job.id, at(30 * MIN))).toMatchObject({ kind: 'fire', late_ms: 100 });
  });
});
