import type { Envelope } from '@agent-platform/contracts';
import { assertHeaders, headerBytes, payloadTooLarge, type ConsumeOptions, type MessageHeaders, type PublishAck, type StreamHandler, type Subscription } from '../bus.ts';
import { Durable, type ErrorSink, type StreamLog } from './durable.ts';

interface StoredMessage {
  /** The envelope as it would travel on the wire; every delivery decodes its own copy. */
  readonly json: string;
  readonly headers: MessageHeaders;
  /** Durable names that acked or dead-lettered this message. */
  readonly finishedBy: Set<string>;
}

/**
 * One in-process stream: a log of messages, de-duplicated by `envelope.id`, read by durable
 * consumers that each get every message (consumers sharing a durable name split them).
 *
 * Retention: a message is kept until every durable that exists has finished with it, and kept
 * indefinitely while no durable exists, so messages published before the first consumer starts
 * are delivered to it. A durable created later starts at the oldest message still kept. Nothing
 * survives the process: the embedded bus is for one process, the queue is what persists.
 */
export class EmbeddedStream implements StreamLog {
  private readonly messages = new Map<number, StoredMessage>();
  private lastSeq = 0;
  /** Accepted ids and when they leave the dedup window, oldest first. */
  private readonly seen = new Map<string, number>();
  private readonly durables = new Map<string, Durable>();

  constructor(
    readonly name: string,
    private readonly dedupWindowMs: number,
    private readonly onError: ErrorSink,
    private readonly maxPayloadBytes: number,
  ) {}

  publish<T>(envelope: Envelope<T>, headers: MessageHeaders = {}): PublishAck {
    const json = JSON.stringify(envelope);
    const bytes = Buffer.byteLength(json) + headerBytes(headers);
    if (bytes > this.maxPayloadBytes) throw payloadTooLarge(`a message for stream ${this.name}`, bytes, this.maxPayloadBytes);
    assertHeaders(headers);
    const now = Date.now();
    this.forgetExpiredIds(now);
    if (this.seen.has(envelope.id)) return { duplicate: true };
    this.seen.set(envelope.id, now + this.dedupWindowMs);
    this.lastSeq += 1;
    this.messages.set(this.lastSeq, { json, headers: { ...headers }, finishedBy: new Set() });
    for (const durable of this.durables.values()) durable.pump();
    return { duplicate: false };
  }

  consume<T>(options: ConsumeOptions, handler: StreamHandler<T>): Subscription {
    if (!Number.isInteger(options.maxDeliver) || options.maxDeliver < 1) {
      throw new Error(`maxDeliver must be a positive integer, got ${options.maxDeliver}`);
    }
    let durable = this.durables.get(options.durable);
    if (!durable) {
      const oldest = this.messages.keys().next();
      const start = oldest.done ? this.lastSeq + 1 : oldest.value;
      durable = new Durable(options.durable, this, start, this.onError);
      this.durables.set(options.durable, durable);
    }
    return durable.attach(options, handler as StreamHandler<unknown>);
  }

  /** Stops every consumer and pending redelivery; resolves when running handlers are done. */
  async drainAll(): Promise<void> {
    await Promise.all([...this.durables.values()].map((d) => d.stop()));
  }

  // StreamLog, used by the durables.

  read(seq: number): { envelope: Envelope<unknown>; headers: MessageHeaders } | undefined {
    const message = this.messages.get(seq);
    return message ? { envelope: JSON.parse(message.json) as Envelope<unknown>, headers: message.headers } : undefined;
  }

  isFinished(seq: number, durable: string): boolean {
    const message = this.messages.get(seq);
    return !message || message.finishedBy.has(durable);
  }

  finish(seq: number, durable: string): void {
    const message = this.messages.get(seq);
    if (!message) return;
    message.finishedBy.add(durable);
    for (const name of this.durables.keys()) if (!message.finishedBy.has(name)) return;
    this.messages.delete(seq);
  }

  get latestSeq(): number {
    return this.lastSeq;
  }

  private forgetExpiredIds(now: number): void {
    // The window is the same for every id, so insertion order is expiry order.
    for (const [id, expiresAt] of this.seen) {
      if (expiresAt > now) return;
      this.seen.delete(id);
    }
  }
}
