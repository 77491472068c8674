import { randomUUID } from 'node:crypto';
import { Queues, type CronJob, type PlatformConfig, type ScheduleFireList } from '@agent-platform/contracts';
import type { Queue } from '@agent-platform/queue';
import type { Store } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import {
  agentTurn,
  cronJobs,
  isSpent,
  nextRun,
  registrationOf,
  toCronJob,
  withNextRun,
  type CronJobRecord,
} from './cron-job-record.ts';
import { createFireLog, toFireView, type FireLog } from './fire-log.ts';
import { startManualRun, type ManualRun } from './manual-run.ts';
import { createScheduleFiring, type ScheduleFiring } from './schedule-firing.ts';
import { parseSchedule, type ScheduleInput } from './schedule-input.ts';
import { createScheduleRegistrar } from './schedule-registrar.ts';

/**
 * `name` of a job: the surface that created it (spec: `schedule` for the schedule routes), or
 * `competency:<id>` for the binding of a scheduled competency (docs/competencies.md "Schedules").
 */
export type JobOrigin = 'schedule' | 'cron' | `competency:${string}`;

/** How a route names the job in a 404 ("schedule", "cron job", "condition job"). */
export type JobNoun = string;

/**
 * Schedules and cron jobs, one store for both surfaces (spec §Endpoints "Schedules and cron
 * jobs"), kept in step with the queue: every enabled job, and no other, is a job scheduler on
 * queue `schedules`. Each change writes the record, then brings the queue in line with it; when
 * the queue refuses, the record is put back, so a failed request changes nothing.
 */
export interface ScheduleService {
  /** 400 for a bad schedule or agent id, 404 for an unknown agent; the job is enabled and on the queue. */
  create(agentId: string, input: ScheduleInput, origin: JobOrigin): Promise<CronJob>;
  /** One agent's jobs (404 for an unknown agent), or every job; oldest first. */
  list(agentId?: string): Promise<CronJob[]>;
  get(id: string, noun?: JobNoun): Promise<CronJob>;
  /** Pause/resume, enable/disable: takes effect on the queue before it returns. */
  setEnabled(id: string, enabled: boolean, noun?: JobNoun): Promise<CronJob>;
  /** Removes the job and its scheduler; 404 when unknown. */
  delete(id: string, noun?: JobNoun): Promise<void>;
  /** The job's recent fires, newest first (docs/schedules.md). */
  fires(id: string, limit: number): Promise<ScheduleFireList>;
  /** POST /cron/jobs/{id}/run: checks the agent (refusals recorded and thrown) and returns the invocation to send. */
  startManualRun(id: string, noun?: JobNoun): Promise<ManualRun>;
  /** Scheduler boot: registers every enabled job and removes schedulers whose job is gone or disabled. */
  reconcile(): Promise<{ registered: number; removed: number }>;
  /** The scheduler's side: what to do with each slot the queue hands over. */
  readonly firing: ScheduleFiring;
}

export interface ScheduleServiceDeps {
  store: Store;
  queue: Queue;
  agents: Pick<AgentStore, 'get'>;
  clock: Clock;
  settings: () => PlatformConfig['schedules'];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Rounds of "write the queue, re-read the record" before a change racing others is left to the next one. */
const SYNC_ROUNDS = 5;

export function createScheduleService(deps: ScheduleServiceDeps): ScheduleService {
  const jobs = cronJobs(deps.store);
  const registrar = createScheduleRegistrar(deps.queue);
  const log: FireLog = createFireLog(deps.store, deps.clock, () => deps.settings().fire_history_days);
  const now = (): Date => deps.clock.now();

  async function recordOr404(id: string, noun: JobNoun): Promise<CronJobRecord> {
    const found = UUID.test(id) ? await jobs.get(id) : null;
    if (found === null) throw Errors.notFound(noun, id);
    return found.doc;
  }

  async function knownAgent(agentId: string): Promise<void> {
    if (!UUID.test(agentId)) throw Errors.invalidId('agent', agentId);
    if ((await deps.agents.get(agentId)) === null) throw Errors.notFound('agent', agentId);
  }

  /** The queue as the record says; repeated while the record changed under it (a concurrent pause and resume). */
  async function sync(id: string): Promise<void> {
    try {
      for (let round = 0; round < SYNC_ROUNDS; round++) {
        const before = await jobs.get(id);
        const wanted = before !== null && before.doc.enabled && !isSpent(before.doc);
        if (wanted) await registrar.register(registrationOf(before.doc));
        else await registrar.unregister(id);
        const after = await jobs.get(id);
        if (after !== null && after.doc.enabled && !isSpent(after.doc) ? wanted : !wanted) return;
      }
    } catch (error) {
      throw Errors.unavailable('the schedule queue', error);
    }
  }

  async function setEnabled(id: string, enabled: boolean, noun: JobNoun = 'schedule'): Promise<CronJob> {
    const previous = await recordOr404(id, noun);
    const stamp = now().toISOString();
    const change = (record: CronJobRecord): CronJobRecord =>
      record.enabled === enabled
        ? record
        : withNextRun({
            ...record,
            enabled,
            updated_at: stamp,
            ...(enabled ? { enabled_at: stamp, slot_cursor: stamp, running: null } : {}),
          });
    const updated = await jobs.update(id, (current) => (current === null ? null : change(current.doc)));
    if (updated === null) throw Errors.notFound(noun, id);
    try {
      await sync(id);
    } catch (error) {
      await jobs.update(id, (current) =>
        current === null ? null : { ...current.doc, enabled: previous.enabled },
      );
      await sync(id).catch(() => undefined);
      throw error;
    }
    return toCronJob(updated.doc, now());
  }

  return {
    async create(agentId, input, origin) {
      const schedule = parseSchedule(input);
      await knownAgent(agentId);
      const stamp = now().toISOString();
      const record: CronJobRecord = {
        id: randomUUID(),
        agent_id: agentId,
        name: origin,
        enabled: true,
        schedule,
        action: agentTurn(input.prompt),
        created_at: stamp,
        last_run: null,
        next_run: null,
        overlap: input.overlap ?? 'skip',
        enabled_at: stamp,
        slot_cursor: stamp,
        last_slot: null,
        running: null,
        missed_slots: 0,
        updated_at: stamp,
      };
      record.next_run = nextRun(record, now());
      await jobs.insert(record);
      try {
        await sync(record.id);
      } catch (error) {
        await jobs.delete(record.id);
        await registrar.unregister(record.id).catch(() => undefined);
        throw error;
      }
      return toCronJob(record, now());
    },

    async list(agentId) {
      if (agentId !== undefined) await knownAgent(agentId);
      const rows = await jobs.find({
        ...(agentId === undefined ? {} : { where: { agent_id: agentId } }),
        orderBy: { field: 'created_at' },
      });
      const at = now();
      return rows.map(({ doc }) => toCronJob(doc, at));
    },

    async get(id, noun = 'schedule') {
      return toCronJob(await recordOr404(id, noun), now());
    },

    setEnabled,

    async delete(id, noun = 'schedule') {
      const record = await recordOr404(id, noun);
      if (!(await jobs.delete(id))) throw Errors.notFound(noun, id);
      try {
        await sync(id);
      } catch (error) {
        await jobs.upsert(record);
        await sync(id).catch(() => undefined);
        throw error;
      }
    },

    async fires(id, limit) {
      const record = await recordOr404(id, 'schedule');
      const fires = await log.list(id, limit);
      return {
        schedule_id: id,
        overlap: record.overlap,
        missed_slots: record.missed_slots,
        fires: fires.map(toFireView),
      };
    },

    async startManualRun(id, noun = 'cron job') {
      return startManualRun(
        { jobs, log, agents: deps.agents, clock: deps.clock },
        await recordOr404(id, noun),
      );
    },

    async reconcile() {
      const records = await jobs.find();
      const enabled = new Set(
        records.filter(({ doc }) => doc.enabled && !isSpent(doc)).map(({ doc }) => doc.id),
      );
      const queued = (await deps.queue.listSchedulers(Queues.schedules)).map((s) => s.id);
      // Each id through `sync`, which re-reads the record after writing the queue: a job created,
      // paused or deleted by an api node while this runs ends up as its record says.
      for (const id of new Set([...records.map(({ doc }) => doc.id), ...queued])) await sync(id);
      return { registered: enabled.size, removed: queued.filter((id) => !enabled.has(id)).length };
    },

    firing: createScheduleFiring({
      jobs,
      log,
      agents: deps.agents,
      clock: deps.clock,
      settings: deps.settings,
    }),
  };
}
