import type { NatsConnection } from '@nats-io/transport-node';
import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { Subscription } from '../bus.ts';
import { InFlight } from '../embedded/in-flight.ts';
import { deliver, type DeliveryContext } from './nats-delivery.ts';

export interface PullConsumerDeps extends DeliveryContext {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  /** Creates the stream and durable if missing (idempotent): at start and after a failed pull. */
  readonly ensure: () => Promise<{ stream: string; durable: string }>;
}

/**
 * How long one pull request waits on the server. After a reconnect the client re-issues open pull
 * requests itself; when it cannot (JetStream still starting), the request's heartbeats stop and
 * it fails within this time, and the retry below takes over. Short, so that takes seconds.
 */
const FETCH_EXPIRES_MS = 5_000;
const MAX_RETRY_DELAY_MS = 2_000;

/**
 * One `consume()` call: a pull loop that never holds more messages than `concurrency`. Each free
 * slot is a credit; credits are spent on pull requests (`fetch` of that many messages) and come
 * back when a handler finishes or a pull ends short. Nothing is prefetched past the free slots, so
 * no message waits in a local buffer while its ack timer runs, and consumers sharing a durable
 * split the work by how fast they finish it.
 */
export class PullConsumer implements Subscription {
  private consumer: Consumer | undefined;
  private credits: number;
  private stopped = false;
  /** Set from a failed pull until the consumer is reachable again; no pulls meanwhile. */
  private retrying = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly fetches = new Set<ConsumerMessages>();
  private readonly pulls = new InFlight();
  private readonly handlers = new InFlight();

  constructor(private readonly deps: PullConsumerDeps) {
    this.credits = Math.max(1, Math.floor(deps.options.concurrency ?? 1));
  }

  /** Creates the stream and durable, then starts pulling. Rejects if JetStream refuses them. */
  async start(): Promise<{ stream: string; durable: string }> {
    const { consumer, names } = await this.open();
    this.consumer = consumer;
    this.refill();
    return names;
  }

  /** Stops pulling, hands back anything that arrives meanwhile, waits for running handlers. */
  async drain(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await Promise.all([...this.fetches].map((fetch) => fetch.close()));
    await this.pulls.idle();
    await this.handlers.idle();
  }

  private async open(): Promise<{ consumer: Consumer; names: { stream: string; durable: string } }> {
    const names = await this.deps.ensure();
    return { consumer: await this.deps.js.consumers.get(names.stream, names.durable), names };
  }

  private refill(): void {
    const consumer = this.consumer;
    if (this.stopped || this.retrying || !consumer || this.credits <= 0) return;
    const batch = this.credits;
    this.credits = 0;
    void this.pulls.track(this.pull(consumer, batch));
  }

  private async pull(consumer: Consumer, batch: number): Promise<void> {
    let received = 0;
    let failure: { error: unknown } | undefined;
    try {
      const messages = await consumer.fetch({ max_messages: batch, expires: FETCH_EXPIRES_MS });
      this.fetches.add(messages);
      if (this.stopped) void messages.close();
      try {
        for await (const msg of messages) {
          received += 1;
          // A pull the client resumed after a reconnect can bring more than asked, and a message
          // can land while draining: hand those back now instead of holding them for ackWait.
          if (this.stopped || received > batch) this.handBack(msg);
          else this.dispatch(msg);
        }
      } finally {
        this.fetches.delete(messages);
      }
    } catch (error) {
      failure = { error };
    }
    this.credits += batch - Math.min(received, batch);
    if (!failure) {
      this.failures = 0;
      return this.refill();
    }
    this.retryLater(failure.error);
  }

  private dispatch(msg: JsMsg): void {
    const run = deliver(msg, this.deps).finally(() => {
      this.credits += 1;
      this.refill();
    });
    this.handlers.track(run).catch((error: unknown) => this.deps.onError(error, { subject: this.deps.subject }));
  }

  private handBack(msg: JsMsg): void {
    try {
      msg.nak();
    } catch {
      // The connection is closed: the server redelivers after ackWait anyway.
    }
  }

  /** A failed pull (server restarting, consumer deleted): back off, re-create, pull again. */
  private retryLater(error: unknown): void {
    if (this.stopped || this.retrying) return;
    this.retrying = true;
    this.failures += 1;
    if (!this.deps.nc.isClosed()) this.deps.onError(error, { subject: this.deps.subject });
    const delay = Math.min(100 * 2 ** (this.failures - 1), MAX_RETRY_DELAY_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.pulls.track(this.recover());
    }, delay);
  }

  private async recover(): Promise<void> {
    if (this.stopped) return;
    try {
      this.consumer = (await this.open()).consumer;
      this.retrying = false;
      this.refill();
    } catch (error) {
      this.retrying = false;
      this.retryLater(error);
    }
  }
}
