import type { Envelope } from '@agent-platform/contracts';
import { BusError, DEFAULT_MAX_PAYLOAD_BYTES } from '../bus.ts';
import type {
  Bus,
  ConsumeOptions,
  PublishAck,
  PublishOptions,
  RequestHandler,
  RequestOptions,
  ServeOptions,
  StreamHandler,
  Subscription,
} from '../bus.ts';
import type { ErrorSink } from './durable.ts';
import { EmbeddedStream } from './embedded-stream.ts';
import { Notifier } from './notifier.ts';
import { RequestRouter } from './request-router.ts';

export interface EmbeddedBusOptions {
  /** How long a published `envelope.id` is remembered for de-duplication; default 2 minutes. */
  dedupWindowMs?: number;
  /** Receives errors nobody else can: a listener that threw, an `onDeadLetter` that threw. */
  onError?: ErrorSink;
  /** Largest encoded payload (bus.ts "Size"); default 1 MiB, nats-server's default `max_payload`. */
  maxPayloadBytes?: number;
}

/** JetStream's default duplicate window, so both adapters drop the same re-publishes. */
const DEFAULT_DEDUP_WINDOW_MS = 120_000;

/**
 * The bus inside one process (all-in-one mode). It keeps the wire's behaviour rather than taking
 * in-process shortcuts: payloads are copied through JSON, handlers run asynchronously, and
 * failures use the same `BusError` codes as the NATS adapter (pinned by the bus conformance
 * suite). Streams live in memory: durable work that must survive a restart goes on the queue.
 */
export class EmbeddedBus implements Bus {
  private readonly router: RequestRouter;
  private readonly notifier: Notifier;
  private readonly maxPayload: number;
  private readonly streams = new Map<string, EmbeddedStream>();
  private readonly dedupWindowMs: number;
  private readonly onError: ErrorSink;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(options: EmbeddedBusOptions = {}) {
    this.dedupWindowMs = options.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS;
    this.onError = options.onError ?? (() => undefined);
    this.maxPayload = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.router = new RequestRouter(this.maxPayload);
    this.notifier = new Notifier(this.onError, this.maxPayload);
  }

  async request<Req, Res>(subject: string, payload: Req, options: RequestOptions): Promise<Res> {
    this.assertOpen();
    return this.router.request<Req, Res>(subject, payload, options);
  }

  async serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Promise<Subscription> {
    this.assertOpen();
    return this.router.serve(subject, handler, options);
  }

  async publish<T>(stream: string, envelope: Envelope<T>, options?: PublishOptions): Promise<PublishAck> {
    this.assertOpen();
    return this.stream(stream).publish(envelope, options?.headers);
  }

  async consume<T>(stream: string, options: ConsumeOptions, handler: StreamHandler<T>): Promise<Subscription> {
    this.assertOpen();
    return this.stream(stream).consume(options, handler);
  }

  async notify<T>(subject: string, payload: T): Promise<void> {
    this.assertOpen();
    this.notifier.notify(subject, payload);
  }

  async listen<T>(subject: string, handler: (payload: T) => void): Promise<Subscription> {
    this.assertOpen();
    return this.notifier.listen(subject, handler as (payload: unknown) => void);
  }

  maxPayloadBytes(): number {
    return this.maxPayload;
  }

  async health(): Promise<{ kind: string; status: 'ok' | 'down'; detail?: string }> {
    return this.closed ? { kind: 'embedded', status: 'down', detail: 'closed' } : { kind: 'embedded', status: 'ok' };
  }

  /** Refuses new calls at once, then waits for every running handler. Safe to call twice. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= Promise.all([
      this.router.drainAll(),
      this.notifier.drainAll(),
      ...[...this.streams.values()].map((s) => s.drainAll()),
    ]).then(() => undefined);
    return this.closing;
  }

  private stream(name: string): EmbeddedStream {
    let stream = this.streams.get(name);
    if (!stream) {
      stream = new EmbeddedStream(name, this.dedupWindowMs, this.onError, this.maxPayload);
      this.streams.set(name, stream);
    }
    return stream;
  }

  private assertOpen(): void {
    if (this.closed) throw new BusError('closed', 'the bus is closed');
  }
}

/** An in-process bus; no I/O, so it is created rather than opened. */
export function createEmbeddedBus(options?: EmbeddedBusOptions): Bus {
  return new EmbeddedBus(options);
}
