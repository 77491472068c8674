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
}

export function createWebhookDeliveries(deps: WebhookDeliveryDeps): WebhookDeliveries {
  const webhooks = webhookCollection(deps.store);
  const log = webhookDeliveryLog(deps);
  return {
    async fanOut(event) {
      if (event.agent_id === null) return 0;
      const targets = await webhooks.find({ where: { agent_id: event.agent_id } });
      const { max_attempts, backoff_base_ms } = deps.settings();
      let added = 0;
      for (const { doc } of targets) {
        const job: WebhookDeliveryJob = { webhook_id: doc.id, event, max_attempts };
        // The job id de-duplicates a redelivered event: one delivery per (webhook, event).
        const result = await deps.queue.add(Queues.webhookDeliveries, job, {
          jobId: `${doc.id}:${event.id}`,
          attempts: max_attempts,
          backoffMs: backoff_base_ms,
        });
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
  };
}
