import type { Envelope } from '@agent-platform/contracts';
import { isRetryable } from '../bus.ts';
import type { ConsumeOptions, MessageHeaders, StreamHandler, Subscription } from '../bus.ts';
import { InFlight } from './in-flight.ts';

export type ErrorSink = (error: unknown, context: { subject: string }) => void;

/** What a durable needs from its stream's log. */
export interface StreamLog {
  readonly name: string;
  readonly latestSeq: number;
  /** A fresh decoded copy of message `seq` and its headers, or undefined once it is no longer kept. */
  read(seq: number): { envelope: Envelope<unknown>; headers: MessageHeaders } | undefined;
  isFinished(seq: number, durable: string): boolean;
  finish(seq: number, durable: string): void;
}

interface Consumer {
  readonly options: ConsumeOptions;
  readonly handler: StreamHandler<unknown>;
  readonly concurrency: number;
  readonly inFlight: InFlight;
  /** Deliveries holding a slot; a delivery presumed lost (ackWaitMs) gives its slot back. */
  busy: number;
}

/**
 * The state of one durable name on one stream: where it has read to, which messages wait for a
 * redelivery, how many times each was delivered, and the consumers sharing the name.
 */
export class Durable {
  private cursor: number;
  /** Messages due for redelivery, delivered before fresh ones. */
  private readonly ready: number[] = [];
  private readonly deliveries = new Map<number, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private consumers: Consumer[] = [];
  private turn = 0;

  constructor(
    readonly name: string,
    private readonly log: StreamLog,
    start: number,
    private readonly onError: ErrorSink,
  ) {
    this.cursor = start;
  }

  attach(options: ConsumeOptions, handler: StreamHandler<unknown>): Subscription {
    const consumer: Consumer = {
      options,
      handler,
      concurrency: Math.max(1, options.concurrency ?? 1),
      inFlight: new InFlight(),
      busy: 0,
    };
    this.consumers.push(consumer);
    this.pump();
    return {
      drain: async () => {
        this.consumers = this.consumers.filter((c) => c !== consumer);
        await consumer.inFlight.idle();
      },
    };
  }

  /** Detaches every consumer and cancels pending redeliveries (bus close). */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const consumers = this.consumers;
    this.consumers = [];
    await Promise.all(consumers.map((c) => c.inFlight.idle()));
  }

  /** Hands messages to consumers with a free slot, round-robin, until one side runs out. */
  pump(): void {
    for (;;) {
      const consumer = this.freeConsumer();
      if (!consumer) return;
      const seq = this.nextSeq();
      if (seq === undefined) return;
      this.deliver(consumer, seq);
    }
  }

  private freeConsumer(): Consumer | undefined {
    for (let i = 0; i < this.consumers.length; i++) {
      const consumer = this.consumers[(this.turn + i) % this.consumers.length];
      if (consumer && consumer.busy < consumer.concurrency) {
        this.turn = (this.turn + i + 1) % this.consumers.length;
        return consumer;
      }
    }
    return undefined;
  }

  private nextSeq(): number | undefined {
    while (this.ready.length > 0) {
      const seq = this.ready.shift()!;
      if (!this.log.isFinished(seq, this.name)) return seq;
    }
    while (this.cursor <= this.log.latestSeq) {
      const seq = this.cursor++;
      if (!this.log.isFinished(seq, this.name)) return seq;
    }
    return undefined;
  }

  private deliver(consumer: Consumer, seq: number): void {
    const message = this.log.read(seq);
    if (!message) return;
    const { envelope, headers } = message;
    const delivery = (this.deliveries.get(seq) ?? 0) + 1;
    this.deliveries.set(seq, delivery);
    // The envelope's attempt counts deliveries on top of what the publisher set (1 normally).
    envelope.attempt += delivery - 1;
    const { options } = consumer;
    let holdsSlot = true;
    let presumedLost = false;
    consumer.busy += 1;
    const release = (): void => {
      if (!holdsSlot) return;
      holdsSlot = false;
      consumer.busy -= 1;
      this.pump();
    };
    // The embedded adapter cannot stop a handler that overruns ackWaitMs: the first run goes on
    // in the background while the message is redelivered, so handlers must be idempotent on
    // envelope.id (as they must be on NATS anyway).
    const ackTimer =
      options.ackWaitMs === undefined
        ? undefined
        : setTimeout(() => {
            presumedLost = true;
            if (this.log.isFinished(seq, this.name)) return release();
            const lost = new Error(`delivery ${delivery} of ${envelope.id} ran past ackWaitMs ${options.ackWaitMs}`);
            if (delivery >= options.maxDeliver) this.deadLetter(consumer, seq, envelope, lost);
            else this.ready.push(seq);
            release();
          }, options.ackWaitMs);
    ackTimer?.unref();
    const run = Promise.resolve().then(() => consumer.handler(structuredClone(envelope), { headers: { ...headers } }));
    consumer.inFlight.track(run).then(
      () => {
        clearTimeout(ackTimer);
        // A late success still acks, even after the message was presumed lost and redelivered.
        if (!this.log.isFinished(seq, this.name)) this.finish(seq);
        release();
      },
      (error: unknown) => {
        clearTimeout(ackTimer);
        // A failure of a superseded delivery leaves the decision to the newer one.
        const current = !presumedLost && this.deliveries.get(seq) === delivery;
        if (current) this.retryOrDeadLetter(consumer, seq, envelope, delivery, error);
        release();
      },
    );
  }

  private retryOrDeadLetter(consumer: Consumer, seq: number, envelope: Envelope<unknown>, delivery: number, error: unknown): void {
    const { maxDeliver, backoffMs } = consumer.options;
    if (!isRetryable(error) || delivery >= maxDeliver) return this.deadLetter(consumer, seq, envelope, error);
    const delay = backoffMs[Math.min(delivery, backoffMs.length) - 1] ?? 0;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.ready.push(seq);
      this.pump();
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private deadLetter(consumer: Consumer, seq: number, envelope: Envelope<unknown>, error: unknown): void {
    this.finish(seq);
    try {
      consumer.options.onDeadLetter?.(envelope, error);
    } catch (sinkError) {
      this.onError(sinkError, { subject: this.log.name });
    }
  }

  private finish(seq: number): void {
    this.deliveries.delete(seq);
    this.log.finish(seq, this.name);
  }
}
