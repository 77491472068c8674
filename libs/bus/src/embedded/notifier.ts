import { payloadTooLarge, type Subscription } from '../bus.ts';
import type { ErrorSink } from './durable.ts';
import { InFlight } from './in-flight.ts';
import { fromWire, toWire } from './wire-copy.ts';

interface Listener {
  readonly handler: (payload: unknown) => void;
  readonly inFlight: InFlight;
}

/** Fire-and-forget fan-out: every listener of a subject gets its own copy of each payload. */
export class Notifier {
  private readonly subjects = new Map<string, Set<Listener>>();

  constructor(
    private readonly onError: ErrorSink,
    private readonly maxPayloadBytes: number,
  ) {}

  notify(subject: string, payload: unknown): void {
    const wire = toWire(payload);
    if (wire.bytes > this.maxPayloadBytes) throw payloadTooLarge(`the notification on ${subject}`, wire.bytes, this.maxPayloadBytes);
    for (const listener of this.subjects.get(subject) ?? []) {
      const copy = fromWire(wire);
      // Listeners run after notify returns, as they would on another connection; a listener that
      // throws (or returns a promise that rejects) harms no one else.
      const run = Promise.resolve().then(() => listener.handler(copy) as unknown);
      listener.inFlight.track(run).catch((error: unknown) => this.onError(error, { subject }));
    }
  }

  listen(subject: string, handler: (payload: unknown) => void): Subscription {
    let listeners = this.subjects.get(subject);
    if (!listeners) {
      listeners = new Set();
      this.subjects.set(subject, listeners);
    }
    const listener: Listener = { handler, inFlight: new InFlight() };
    listeners.add(listener);
    return {
      drain: async () => {
        const current = this.subjects.get(subject);
        current?.delete(listener);
        if (current?.size === 0) this.subjects.delete(subject);
        await listener.inFlight.idle();
      },
    };
  }

  async drainAll(): Promise<void> {
    const listeners = [...this.subjects.values()].flatMap((set) => [...set]);
    this.subjects.clear();
    await Promise.all(listeners.map((l) => l.inFlight.idle()));
  }
}
