import { Type, type Static } from 'typebox';
import { compiledCheck } from './compiled-check.ts';
import { PlatformEvent } from './platform-events.ts';
import { TraceContext } from './trace-context.ts';

/**
 * The job catalogue of the queue port: every queue the platform uses and the payload of its jobs,
 * in one place, so the producers (the api's schedule routes) and the consumers (the scheduler)
 * agree whatever process they run in.
 */
export const Queues = {
  /**
   * Schedule fires: one job scheduler per schedule (id = the schedule id) whose slot jobs carry a
   * ScheduleFire, plus the scheduler's own retry jobs for fires that failed (they carry `slot_at`).
   */
  schedules: 'schedules',
  /**
   * Outbound webhook deliveries (docs/webhooks.md): one job per (webhook, event), job id
   * `<webhook id>:<event id>`, retried by the queue with exponential backoff.
   */
  webhookDeliveries: 'webhook-deliveries',
} as const;

/**
 * The spec's CronJob `schedule` (spec §Resources "CronJob"), tagged by `kind`: a cron expression of
 * 5 or 6 fields with an IANA `tz` (UTC when null or absent, DECISIONS D9), a fixed period, or one
 * instant.
 */
export const ScheduleSpec = Type.Union([
  Type.Object({ kind: Type.Literal('cron'), expr: Type.String({ minLength: 1 }), tz: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
  Type.Object({ kind: Type.Literal('every'), every_secs: Type.Integer({ minimum: 1 }) }),
  Type.Object({ kind: Type.Literal('at'), at: Type.String({ format: 'date-time' }) }),
]);
export type ScheduleSpec = Static<typeof ScheduleSpec>;

/**
 * The payload of a `schedules` job: which agent to invoke with which message when a slot of the
 * schedule comes. `expression` is what the invocation's `Cron` source shows (the cron expression,
 * `every <n>s` or `at <instant>`). `slot_at` is set only on retry jobs; a slot job gets its slot
 * from the queue (`Job.slot_at`).
 */
export const ScheduleFire = Type.Object({
  schedule_id: Type.String({ minLength: 1 }),
  agent_id: Type.String({ minLength: 1 }),
  expression: Type.String(),
  message: Type.String(),
  slot_at: Type.Optional(Type.String()),
  /** The retry's producer's trace (tracing on only); removed before the handler sees the job. */
  trace_context: Type.Optional(TraceContext),
});
export type ScheduleFire = Static<typeof ScheduleFire>;

/** Consumers check what they take off the queue: another process (or version) may have put it there. */
export const isScheduleFire = compiledCheck(ScheduleFire);

/**
 * The payload of a `webhook-deliveries` job: the event to deliver to one webhook. `max_attempts`
 * is the job's attempt count as enqueued (`[webhooks] max_attempts` then), so the handler knows
 * which attempt is the last and records the dead letter.
 */
export const WebhookDeliveryJob = Type.Object({
  webhook_id: Type.String({ minLength: 1 }),
  event: PlatformEvent,
  max_attempts: Type.Integer({ minimum: 1 }),
  /** The fan-out's trace (tracing on only); removed before the handler sees the job. */
  trace_context: Type.Optional(TraceContext),
});
export type WebhookDeliveryJob = Static<typeof WebhookDeliveryJob>;

export const isWebhookDeliveryJob = compiledCheck(WebhookDeliveryJob);
