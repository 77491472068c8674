import { Queues, type ScheduleFire, type ScheduleSpec } from '@agent-platform/contracts';
import type { Queue, Repeat } from '@agent-platform/queue';

/** A schedule as the scheduler needs it: the agent, the message, and when. */
export interface ScheduleRegistration {
  /** The schedule's id (a UUID, DECISIONS D9); also the job scheduler's id on the queue. */
  id: string;
  agent_id: string;
  schedule: ScheduleSpec;
  /** The CronJob action's `message`, sent to the agent at every slot. */
  message: string;
}

/**
 * Puts schedules on the queue, where the scheduler service fires them (one job scheduler per
 * schedule, on queue `schedules`). What the schedule routes call after storing a CronJob; boot
 * code may call `register` again for every enabled schedule: re-registering an unchanged one is
 * a no-op on the queue (a pending slot is kept, an `at` that already fired does not fire again).
 */
export interface ScheduleRegistrar {
  /** Creates or replaces the schedule's job scheduler; an invalid cron expression or zone is refused, naming it. */
  register(schedule: ScheduleRegistration): Promise<void>;
  /** Removes it (paused, disabled or deleted); false when it was not registered. */
  unregister(scheduleId: string): Promise<boolean>;
}

export function createScheduleRegistrar(queue: Queue): ScheduleRegistrar {
  return {
    register: (schedule) =>
      queue.upsertScheduler<ScheduleFire>(Queues.schedules, schedule.id, toRepeat(schedule.schedule), {
        schedule_id: schedule.id,
        agent_id: schedule.agent_id,
        expression: scheduleExpression(schedule.schedule),
        message: schedule.message,
      }),
    unregister: (scheduleId) => queue.removeScheduler(Queues.schedules, scheduleId),
  };
}

/** The queue port's repeat for a spec schedule (`every_secs` becomes milliseconds). */
export function toRepeat(spec: ScheduleSpec): Repeat {
  switch (spec.kind) {
    case 'cron':
      return { kind: 'cron', expr: spec.expr, tz: spec.tz ?? null };
    case 'every':
      return { kind: 'every', every_ms: spec.every_secs * 1000 };
    case 'at':
      return { kind: 'at', at: spec.at };
  }
}

/** What a fired invocation's `Cron` source names as its `expression`. */
export function scheduleExpression(spec: ScheduleSpec): string {
  switch (spec.kind) {
    case 'cron':
      return spec.expr;
    case 'every':
      return `every ${spec.every_secs}s`;
    case 'at':
      return `at ${spec.at}`;
  }
}
