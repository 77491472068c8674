import type { CronJob, ScheduleBinding, ScheduleDrift } from '@agent-platform/contracts';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { CompetencyRecord } from '../catalog/catalog-records.ts';
import { PlatformError } from '../errors/platform-error.ts';
import { scheduleSpec } from '../schedules/cron-job-record.ts';
import { scheduleExpression } from '../schedules/schedule-registrar.ts';
import type { ScheduleService } from '../schedules/schedule-service.ts';

/**
 * The cron bindings of scheduled competencies (docs/competencies.md "Schedules"): an agent that
 * equips a competency with `schedule` + `schedule_action` has exactly one cron job named
 * `competency:<id>` firing `schedule_action` at the agent on `schedule` (UTC). Jobs go through
 * the ScheduleService like any other, so they are listed, paused and fired like any other.
 */

export const COMPETENCY_JOB_PREFIX = 'competency:';
export const competencyJobName = (competencyId: string) => `${COMPETENCY_JOB_PREFIX}${competencyId}` as const;

/** The competency that owns a job, or null for a job made through the schedule or cron routes. */
export function jobOwner(job: Pick<CronJob, 'name'>): string | null {
  return job.name.startsWith(COMPETENCY_JOB_PREFIX) ? job.name.slice(COMPETENCY_JOB_PREFIX.length) : null;
}

/** What the manifest asks for: one binding per (agent, scheduled competency). */
export interface WantedBinding {
  agent_id: string;
  competency_id: string;
  expression: string;
  message: string;
}

/** The bindings `agent` should have, given its equipped competencies as installed now. */
export function wantedBindings(
  agent: Pick<AgentRecord, 'id' | 'equipped_competencies'>,
  competencies: ReadonlyMap<string, CompetencyRecord>,
): WantedBinding[] {
  const wanted: WantedBinding[] = [];
  for (const id of new Set(agent.equipped_competencies)) {
    const competency = competencies.get(id);
    if (competency?.schedule == null || competency.schedule_action == null) continue;
    wanted.push({
      agent_id: agent.id,
      competency_id: id,
      expression: competency.schedule,
      message: competency.schedule_action,
    });
  }
  return wanted;
}

export function expectedView(wanted: WantedBinding): ScheduleBinding {
  return { job_id: null, expression: wanted.expression, tz: null, message: wanted.message, enabled: true };
}

export function actualView(job: CronJob): ScheduleBinding {
  return {
    job_id: job.id,
    expression:
      job.schedule.kind === 'cron' ? job.schedule.expr : scheduleExpression(scheduleSpec(job.schedule)),
    tz: job.schedule.kind === 'cron' ? job.schedule.tz : null,
    message: job.action.message,
    enabled: job.enabled,
  };
}

const sameSchedule = (job: CronJob, wanted: WantedBinding) =>
  job.schedule.kind === 'cron' && job.schedule.expr === wanted.expression && job.schedule.tz === null;
const sameAction = (job: CronJob, wanted: WantedBinding) => job.action.message === wanted.message;
export const matches = (job: CronJob, wanted: WantedBinding) =>
  sameSchedule(job, wanted) && sameAction(job, wanted);

/** The drift of one wanted binding against the jobs its competency owns on that agent (extras included). */
export function bindingDrift(wanted: WantedBinding, owned: readonly CronJob[]): ScheduleDrift[] {
  const base = { agent_id: wanted.agent_id, competency_id: wanted.competency_id };
  const expected = expectedView(wanted);
  if (owned.length === 0) return [{ ...base, problem: 'missing', expected, actual: null }];
  // The job judged against the manifest is the one that matches it, if any; the others are extra.
  const main = owned.find((job) => matches(job, wanted)) ?? owned[0]!;
  const drift: ScheduleDrift[] = [];
  const problem = !sameSchedule(main, wanted)
    ? 'schedule_differs'
    : !sameAction(main, wanted)
      ? 'action_differs'
      : !main.enabled
        ? 'disabled'
        : null;
  if (problem !== null) drift.push({ ...base, problem, expected, actual: actualView(main) });
  for (const job of owned)
    if (job !== main) drift.push({ ...base, problem: 'extra', expected: null, actual: actualView(job) });
  return drift;
}

/**
 * Brings one agent's competency jobs in line with `wanted` (the equip-time effect): a missing
 * binding is created, a job whose schedule or action no longer matches the manifest is replaced,
 * jobs of competencies no longer equipped (or no longer scheduled) and duplicates are deleted.
 * A job the operator paused stays paused, and its replacement starts paused too: an upgrade does
 * not override an operator's decision (reset-schedule does).
 */
export async function syncAgentJobs(
  schedules: ScheduleService,
  agentId: string,
  wanted: readonly WantedBinding[],
  jobs: readonly CronJob[],
): Promise<void> {
  const owned = jobs.filter((job) => job.agent_id === agentId && jobOwner(job) !== null);
  const kept = new Set<string>();
  for (const binding of wanted) {
    const mine = owned.filter((job) => jobOwner(job) === binding.competency_id);
    const keep = mine.find((job) => matches(job, binding));
    if (keep !== undefined) {
      kept.add(keep.id);
      continue;
    }
    const paused = mine.length > 0 && mine.every((job) => !job.enabled);
    const created = await createBinding(schedules, binding);
    if (paused) await schedules.setEnabled(created.id, false);
    kept.add(created.id);
  }
  for (const job of owned) if (!kept.has(job.id)) await deleteQuietly(schedules, job.id);
}

/**
 * reset-schedule: exactly one enabled job matching the manifest for (agent, competency), or none
 * when the competency has no schedule. A matching job is kept (and enabled) so its id and fire
 * history survive; everything else the competency owns on the agent is deleted.
 */
export async function resetBinding(
  schedules: ScheduleService,
  agentId: string,
  competencyId: string,
  wanted: WantedBinding | null,
  jobs: readonly CronJob[],
): Promise<void> {
  const mine = jobs.filter((job) => job.agent_id === agentId && jobOwner(job) === competencyId);
  const keep = wanted === null ? undefined : mine.find((job) => matches(job, wanted));
  for (const job of mine) if (job !== keep) await deleteQuietly(schedules, job.id);
  if (wanted === null) return;
  if (keep === undefined) await createBinding(schedules, wanted);
  else if (!keep.enabled) await schedules.setEnabled(keep.id, true);
}

function createBinding(schedules: ScheduleService, binding: WantedBinding): Promise<CronJob> {
  return schedules.create(
    binding.agent_id,
    { expression: binding.expression, prompt: binding.message },
    competencyJobName(binding.competency_id),
  );
}

/** A job another request deleted meanwhile is already where this wants it. */
async function deleteQuietly(schedules: ScheduleService, id: string): Promise<void> {
  await schedules.delete(id, 'cron job').catch((error: unknown) => {
    if (!(PlatformError.is(error) && error.category === 'NotFound')) throw error;
  });
}
