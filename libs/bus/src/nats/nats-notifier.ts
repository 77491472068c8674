import type { NatsConnection } from '@nats-io/transport-node';
import type { Subscription } from '../bus.ts';
import { InFlight } from '../embedded/in-flight.ts';
import { decode, encodeWithin, type ErrorSink } from './nats-codec.ts';
import { assertSubject } from './nats-names.ts';

/**
 * Fire-and-forget fan-out over core NATS publish/subscribe, without a queue group: every listener
 * on every connection gets each notification that arrives while it listens, and none is kept.
 */
export class NatsNotifier {
  private readonly listeners = new Set<Subscription>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly onError: ErrorSink,
  ) {}

  notify(subject: string, payload: unknown): void {
    assertSubject(subject);
    this.nc.publish(subject, encodeWithin(this.nc, payload, `the notification on ${subject}`));
  }

  async listen(subject: string, handler: (payload: unknown) => void): Promise<Subscription> {
    assertSubject(subject);
    const inFlight = new InFlight();
    const sub = this.nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error) return this.onError(error, { subject });
        // A listener that throws, or returns a promise that rejects, harms no other listener.
        const run = Promise.resolve().then(() => handler(decode(msg.data)) as unknown);
        inFlight.track(run).catch((e: unknown) => this.onError(e, { subject }));
      },
    });
    // Listening starts when the server knows it, so a notify sent right after from another
    // connection reaches this listener.
    await this.nc.flush();
    const subscription: Subscription = {
      drain: async () => {
        this.listeners.delete(subscription);
        if (!sub.isClosed()) await sub.drain().catch((e: unknown) => this.onError(e, { subject }));
        await inFlight.idle();
      },
    };
    this.listeners.add(subscription);
    return subscription;
  }

  async drainAll(): Promise<void> {
    await Promise.all([...this.listeners].map((l) => l.drain()));
  }
}
