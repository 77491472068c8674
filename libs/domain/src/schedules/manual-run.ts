import type { Collection } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import type { Clock } from '../time/clock.ts';
import { scheduleSpec, type CronJobRecord } from './cron-job-record.ts';
import { agentRefusal, failedFire, fireReason } from './fire-outcome.ts';
import type { FireLog } from './fire-log.ts';
import { scheduleExpression } from './schedule-registrar.ts';

/** A POST /cron/jobs/{id}/run under way: what to send, and where its outcome goes. */
export interface ManualRun {
  /** The invocation: the job's agent and prompt, with a `Cron` source whose `scheduled_at` is now. */
  invocation: {
    agent_id: string;
    message: string;
    source: { Cron: { schedule_id: string; expression: string; scheduled_at: string } };
  };
  /** Records the invocation's end: success, or the error it threw. */
  finish(result: { ok: true } | { ok: false; error: unknown }): Promise<void>;
}

export interface ManualRunDeps {
  jobs: Collection<CronJobRecord>;
  log: FireLog;
  agents: Pick<AgentStore, 'get'>;
  clock: Clock;
}

/**
 * Starts a manual run of `record` (spec: "fires immediately and synchronously"). It is recorded
 * in the fire log (trigger `manual`) and sets `last_run`; it ignores the overlap policy and the
 * job being paused, as an operator's explicit request. An unknown or Suspended agent is refused
 * (thrown, and recorded as `refused`).
 */
export async function startManualRun(deps: ManualRunDeps, record: CronJobRecord): Promise<ManualRun> {
  const now = deps.clock.now().toISOString();
  const base = {
    schedule_id: record.id,
    agent_id: record.agent_id,
    slot_at: now,
    trigger: 'manual' as const,
  };
  const refusal = agentRefusal(await deps.agents.get(record.agent_id), record.agent_id);
  if (refusal !== null) {
    await deps.log.add({
      ...base,
      outcome: 'refused',
      reason: fireReason(refusal.category, refusal.message),
      finished_at: now,
    });
    throw refusal;
  }
  const fire = await deps.log.add({ ...base, outcome: 'running', late_ms: 0, attempts: 1 });
  await deps.jobs.update(record.id, (current) =>
    current === null ? null : { ...current.doc, last_run: now, updated_at: now },
  );
  return {
    invocation: {
      agent_id: record.agent_id,
      message: record.action.message,
      source: {
        Cron: {
          schedule_id: record.id,
          expression: scheduleExpression(scheduleSpec(record.schedule)),
          scheduled_at: now,
        },
      },
    },
    async finish(result) {
      const finished_at = deps.clock.now().toISOString();
      await deps.log.change(
        fire.id,
        result.ok ? { outcome: 'fired', finished_at } : { ...failedFire(result.error), finished_at },
      );
    },
  };
}
