import { Queues, type PlatformEvent, type WebhookDeliveryJob } from '@agent-platform/contracts';
import type { Job, Queue } from '@agent-platform/queue';
import type { Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import { attemptDelivery, eventMessage, type WebhookTransport } from './webhook-attempt.ts';
import { webhookCollection } from './webhook-record.ts';
import type { WebhookSecrets } from './webhook-secrets.ts';
import { webhookDeliveryLog } from './webhook-service.ts';

export interface WebhookDeliverySettings {
  max_attempts: number;
  backoff_base_ms: number;
  log_retention_days: number;
}

export interface WebhookDeliveryDeps {
  store: Store;
  queue: Queue;
  clock: Clock;
  secrets: WebhookSecrets;
  transport: WebhookTransport;
  settings: () => WebhookDeliverySettings;
}

/** The worker side of webhooks: events become jobs, jobs become signed POSTs (docs/webhooks.md "Deliveries"). */
export interface WebhookDeliveries {
  /** Enqueues one job per webhook of the event's agent; returns how many were new. */
  fanOut(event: PlatformEvent): Promise<number>;
  /**
   * Runs one attempt of a job. Resolves when delivered, when the webhook is gone (deleted: its
   * pending deliveries stop) and after the last attempt (dead-lettered); throws to be retried.
   */
  deliver(job: Job<WebhookDeliveryJob>): Promise<'delivered' | 'gone' | 'dead_letter'>;
  /**
   * The queue's `onLost` for a job whose last attempt was lost with its worker (killed mid-send):
   * records that attempt in the delivery log as a dead letter (whether the receiver got it is
   * unknown). Resolves `gone` when the webhook was deleted meanwhile (nothing recorded).
   */
  lost(job: Job<WebhookDeliveryJob>, reason: string): Promise<'dead_letter' | 'gone'>;
}

/**
 * Collection `webhook_fan_out`: one entry per (webhook, event) enqueued, kept as long as the
 * delivery log (`[webhooks] log_retention_days`). The queue de-duplicates a job id only while its
 * job exists; this makes an event fanned out again after its delivery finished add nothing.
 */
export const WEBHOOK_FAN_OUT_COLLECTION = 'webhook_fan_out';

interface FanOutRecord {
  /** The delivery job's id, `<webhook id>:<event id>`. */
  id: string;
  expires_at: string;
}

export function createWebhookDeliveries(deps: WebhookDeliveryDeps): WebhookDeliveries {
  const webhooks = webhookCollection(deps.store);
  const log = webhookDeliveryLog(deps);
  const enqueued = deps.store.collection<FanOutRecord>(WEBHOOK_FAN_OUT_COLLECTION, { ttlField: 'expires_at' });
  return {
    async fanOut(event) {
      if (event.agent_id === null) return 0;
      const targets = await webhooks.find({ where: { agent_id: event.agent_id } });
      const { max_attempts, backoff_base_ms, log_retention_days } = deps.settings();
      const expires = new Date(deps.clock.now().getTime() + log_retention_days * 86_400_000).toISOString();
      let added = 0;
      for (const { doc } of targets) {
        const jobId = `${doc.id}:${event.id}`;
        // A redelivered event (its ack lost, or a fan-out retried after failing for another
        // webhook) is delivered once per webhook: the job id de-duplicates while the job exists,
        // the fan-out record once it finished. Recorded after the add, so a crash in between
        // enqueues again (at least once) rather than never.
        if ((await enqueued.get(jobId)) !== null) continue;
        const job: WebhookDeliveryJob = { webhook_id: doc.id, event, max_attempts };
        const result = await deps.queue.add(Queues.webhookDeliveries, job, { jobId, attempts: max_attempts, backoffMs: backoff_base_ms });
        await enqueued.upsert({ id: jobId, expires_at: expires });
        if (!result.duplicate) added += 1;
      }
      return added;
    },

    async deliver(job) {
      const found = await webhooks.get(job.data.webhook_id);
      if (found === null) return 'gone';
      const last = job.attempt >= job.data.max_attempts;
      const target = { webhook_id: found.doc.id, url: found.doc.url, secret: deps.secrets.open(found.doc) };
      const outcome = await attemptDelivery(
        { transport: deps.transport, log, clock: deps.clock },
        target,
        eventMessage(found.doc.id, job.data.event),
        { number: job.attempt, last },
      );
      if (outcome.delivered) return 'delivered';
      if (last) return 'dead_letter';
      throw Errors.deliveryFailed(`webhook delivery attempt ${job.attempt} of ${job.data.max_attempts} failed: ${outcome.error ?? ''}`);
    },

    async lost(job, reason) {
      const found = await webhooks.get(job.data.webhook_id);
      if (found === null) return 'gone';
      const message = eventMessage(found.doc.id, job.data.event);
      await log.record({
        webhook_id: found.doc.id,
        message_id: message.id,
        event_id: message.event_id,
        kind: message.kind,
        attempt: job.attempt,
        delivered: false,
        status_code: null,
        error: `attempt ${job.attempt} of ${job.data.max_attempts} was lost with its worker (${reason}); whether the receiver got it is unknown, and no attempt is left`,
        latency_ms: 0,
        dead_letter: true,
        at: deps.clock.now().toISOString(),
      });
      return 'dead_letter';
    },
  };
}
