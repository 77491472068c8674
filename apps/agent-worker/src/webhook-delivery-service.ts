import { Durables, isPlatformEvent, isWebhookDeliveryJob, Queues, Streams, type PlatformConfig, type PlatformEvent, type WebhookDeliveryJob } from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';
import { createWebhookDeliveries, Errors, type Clock, type WebhookSecrets, type WebhookTransport } from '@agent-platform/domain';
import { guardedPoster } from '@agent-platform/net';
import { inSpan, NO_INSTRUMENTS, type Logger, type PlatformInstruments } from '@agent-platform/observability';
import type { Queue, Worker } from '@agent-platform/queue';
import type { Store } from '@agent-platform/store';

export interface WebhookDeliveryServiceDeps {
  store: Store;
  bus: Bus;
  queue: Queue;
  clock: Clock;
  logger: Logger;
  /** Opens the signing secrets (the vault key of the api nodes). */
  secrets: WebhookSecrets;
  config: () => PlatformConfig;
  /** Tests only: another transport (a simulated public address or resolver); default `webhookTransport(config)`. */
  transport?: WebhookTransport;
  /** Where the deliveries are counted (`webhook_deliveries_total`); absent: not counted. */
  instruments?: PlatformInstruments;
}

/** Redeliveries of an event whose fan-out failed on I/O (store or queue unreachable). */
const FAN_OUT_MAX_DELIVER = 10;
const FAN_OUT_BACKOFF_MS = [500, 1_000, 2_000, 5_000];

/** The D9-guarded transport of deliveries, bounded by `[webhooks]`, read per request. */
export function webhookTransport(config: () => PlatformConfig): WebhookTransport {
  return guardedPoster(() => {
    const { network, webhooks } = config();
    return { allowPrivate: network.allow_private_targets, timeoutMs: webhooks.timeout_ms, maxResponseBytes: webhooks.max_response_bytes };
  });
}

/**
 * Outbound webhook deliveries (docs/webhooks.md "Which process delivers"), run by every agent
 * worker and by the all-in-one:
 * - the fan-out consumes `platform.events` under the durable `webhook-fan-out` (the workers split
 *   the events) and enqueues one `webhook-deliveries` job per webhook of the event's agent, job id
 *   `<webhook>:<event>`, so a redelivered event adds nothing;
 * - the delivery jobs are taken by any worker; a failed attempt throws and the queue retries it
 *   with exponential backoff; a worker killed mid-delivery leaves its job to the queue's stalled
 *   check, and another worker sends it again with the same `webhook-id` (at least once) as the
 *   next attempt: the lost one counts. When the lost one was the last, `onLost` records it as a
 *   dead letter.
 */
export function createWebhookDeliveryService(deps: WebhookDeliveryServiceDeps) {
  const log = deps.logger.child({ service: 'webhooks' });
  const instruments = deps.instruments ?? NO_INSTRUMENTS;
  const deliveries = createWebhookDeliveries({
    store: deps.store,
    queue: deps.queue,
    clock: deps.clock,
    secrets: deps.secrets,
    transport: deps.transport ?? webhookTransport(deps.config),
    settings: () => deps.config().webhooks,
  });
  let events: Subscription | null = null;
  let worker: Worker | null = null;
  return {
    name: 'webhooks',
    async start() {
      worker = await deps.queue.process<WebhookDeliveryJob>(
        Queues.webhookDeliveries,
        async (job) => {
          if (!isWebhookDeliveryJob(job.data)) {
            log.error({ job_id: job.id }, 'webhook-deliveries job without a valid WebhookDeliveryJob; dropped');
            return;
          }
          const attributes = { 'webhook.id': job.data.webhook_id, 'webhook.event.kind': job.data.event.kind, 'webhook.attempt': job.attempt };
          await inSpan('webhook.deliver', { role: 'client', attributes }, async (span) => {
            try {
              const outcome = await deliveries.deliver(job);
              const counted = outcome === 'dead_letter' ? 'dead_lettered' : outcome;
              span.setAttributes({ 'webhook.outcome': counted });
              instruments.webhookDelivery(counted);
              if (outcome === 'dead_letter') log.warn({ job_id: job.id, attempt: job.attempt }, 'webhook delivery dead-lettered after its last attempt');
            } catch (error) {
              // Thrown: the attempt failed and the queue retries it (the last attempt dead-letters instead).
              instruments.webhookDelivery('retrying');
              throw error;
            }
          });
        },
        {
          concurrency: deps.config().webhooks.concurrency,
          // A last attempt lost with its worker (killed mid-send): recorded as a dead letter.
          onLost: async (job, reason) => {
            if (!isWebhookDeliveryJob(job.data)) return;
            const outcome = await deliveries.lost(job, reason);
            if (outcome !== 'dead_letter') return;
            instruments.webhookDelivery('dead_lettered');
            log.warn({ job_id: job.id, attempt: job.attempt, reason }, 'webhook delivery dead-lettered: its last attempt was lost with its worker');
          },
        },
      );
      events = await deps.bus.consume<PlatformEvent>(
        Streams.platformEvents,
        {
          durable: Durables.webhookFanOut,
          maxDeliver: FAN_OUT_MAX_DELIVER,
          backoffMs: FAN_OUT_BACKOFF_MS,
          onDeadLetter: (envelope, error) => log.error({ err: error, message_id: envelope.id }, 'a platform event could not be fanned out to webhooks'),
        },
        async (envelope) => {
          if (!isPlatformEvent(envelope.data)) {
            log.error({ message_id: envelope.id }, 'platform.events message without a valid PlatformEvent; dropped');
            return;
          }
          try {
            await deliveries.fanOut(envelope.data);
          } catch (error) {
            throw Errors.unavailable('the webhook store or queue', error);
          }
        },
      );
      log.debug('webhook deliveries started');
    },
    async stop() {
      const [consumer, jobs] = [events, worker];
      events = null;
      worker = null;
      await consumer?.drain();
      await jobs?.close();
      log.debug('webhook deliveries stopped');
    },
  };
}
