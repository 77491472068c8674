import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Envelope } from '@agent-platform/contracts';
import { BusError } from '../bus.ts';
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
import { maxPayloadOf, type ErrorSink } from './nats-codec.ts';
import { ConnectionGate } from './nats-connection-gate.ts';
import { watchExhausted } from './nats-exhausted-watch.ts';
import { assertStreamPrefix } from './nats-names.ts';
import { NatsNotifier } from './nats-notifier.ts';
import { PullConsumer } from './nats-pull-consumer.ts';
import { NatsRequests } from './nats-requests.ts';
import { NatsStreams } from './nats-streams.ts';

export interface NatsBusOptions {
  /** Server URL(s), comma-separated: `nats://127.0.0.1:4222`. */
  servers: string;
  /** Connection name shown by the server's monitoring (`connz`). */
  name?: string;
  /** First token of every stream subject and stream name; letters, digits, `-`. Default `AP`. */
  streamPrefix?: string;
  /** JetStream `duplicate_window` of the streams this bus creates; default 2 minutes. */
  dedupWindowMs?: number;
  /** JetStream `max_age` of the streams this bus creates (0 = keep forever); default 7 days. */
  maxAgeMs?: number;
  /** Replicas of the streams this bus creates: 1 on a single server, 3 in a cluster. Default 1. */
  replicas?: number;
  /** How long `publish` keeps retrying a restarting server before it fails; default 10 s. */
  publishTimeoutMs?: number;
  /** Receives errors nobody else can: a listener that threw, an `onDeadLetter` that threw, a failed pull. */
  onError?: ErrorSink;
}

const DEFAULT_DEDUP_WINDOW_MS = 120_000;
const DEFAULT_MAX_AGE_MS = 7 * 24 * 3_600_000;
const DEFAULT_ACK_WAIT_MS = 30_000;
/** Bounds `close()` when the server is unreachable and the connection cannot drain. */
const CLOSE_DRAIN_TIMEOUT_MS = 5_000;

/**
 * The bus over NATS (distributed mode): core NATS for request/reply and notifications, JetStream
 * for durable streams (docs/architecture.md, "Bus (NATS)"). It passes the same conformance suite
 * as the embedded adapter. The connection reconnects forever; pull consumers resume after a
 * server restart, and `publish` retries a restarting server with the same message id.
 */
export class NatsBus implements Bus {
  private readonly requests: NatsRequests;
  private readonly notifier: NatsNotifier;
  private readonly streams: NatsStreams;
  private readonly consumers = new Set<Subscription>();
  private readonly onError: ErrorSink;
  private readonly js: JetStreamClient;
  private readonly connection = new ConnectionGate();
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    options: NatsBusOptions,
  ) {
    const prefix = options.streamPrefix ?? 'AP';
    assertStreamPrefix(prefix);
    this.onError = options.onError ?? (() => undefined);
    this.requests = new NatsRequests(nc, this.onError, this.connection);
    this.notifier = new NatsNotifier(nc, this.onError);
    this.js = jetstream(nc);
    this.streams = new NatsStreams(nc, this.js, jsm, {
      prefix,
      dedupWindowMs: options.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS,
      maxAgeMs: options.maxAgeMs ?? DEFAULT_MAX_AGE_MS,
      replicas: options.replicas ?? 1,
      publishTimeoutMs: options.publishTimeoutMs ?? 10_000,
    });
    void this.watchStatus();
  }

  async request<Req, Res>(subject: string, payload: Req, options: RequestOptions): Promise<Res> {
    this.assertOpen();
    return this.requests.request<Req, Res>(subject, payload, options);
  }

  async serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Promise<Subscription> {
    this.assertOpen();
    return this.requests.serve(subject, handler, options);
  }

  async publish<T>(stream: string, envelope: Envelope<T>, options?: PublishOptions): Promise<PublishAck> {
    this.assertOpen();
    return this.streams.publish(stream, envelope, options?.headers);
  }

  async consume<T>(stream: string, options: ConsumeOptions, handler: StreamHandler<T>): Promise<Subscription> {
    this.assertOpen();
    if (!Number.isInteger(options.maxDeliver) || options.maxDeliver < 1) {
      throw new Error(`maxDeliver must be a positive integer, got ${options.maxDeliver}`);
    }
    const ackWaitMs = options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    const context = { options, ackWaitMs, onError: this.onError, subject: stream };
    const puller = new PullConsumer({
      ...context,
      handler: handler as StreamHandler<unknown>,
      nc: this.nc,
      js: this.js,
      ensure: () => this.streams.ensureConsumer(stream, options, ackWaitMs),
    });
    const names = await puller.start();
    let watch: Subscription | undefined;
    try {
      if (options.onDeadLetter) watch = await watchExhausted({ ...context, ...names, nc: this.nc, jsm: this.jsm });
    } catch (error) {
      await puller.drain();
      throw error;
    }
    const subscription: Subscription = {
      drain: async () => {
        this.consumers.delete(subscription);
        await Promise.all([puller.drain(), watch?.drain()]);
        // Acks are fire-and-forget: make sure they reached the server before saying "drained",
        // so the durable's next consumer does not get those messages again.
        await this.flushQuietly();
      },
    };
    this.consumers.add(subscription);
    return subscription;
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
    return maxPayloadOf(this.nc);
  }

  async health(): Promise<{ kind: string; status: 'ok' | 'down'; detail?: string }> {
    if (this.closed || this.nc.isClosed()) return { kind: 'nats', status: 'down', detail: 'closed' };
    if (!this.connection.isUp) return { kind: 'nats', status: 'down', detail: 'disconnected, reconnecting' };
    return { kind: 'nats', status: 'ok', detail: `connected to ${this.nc.getServer()}` };
  }

  /** Refuses new calls at once, drains every subscription (running handlers finish), then the connection. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      await Promise.all([this.requests.drainAll(), this.notifier.drainAll(), ...[...this.consumers].map((c) => c.drain())]);
      const drained = this.nc.drain().then(
        () => true,
        () => false,
      );
      if (!(await Promise.race([drained, delay(CLOSE_DRAIN_TIMEOUT_MS).then(() => false)]))) await this.nc.close();
      // Requests still waiting for a reconnect fail now rather than at their timeout.
      this.connection.close();
    })();
    return this.closing;
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') this.connection.markDown();
      if (status.type === 'reconnect') {
        this.connection.markUp();
        this.streams.reconnected();
      }
    }
  }

  private async flushQuietly(): Promise<void> {
    if (this.nc.isClosed() || !this.connection.isUp) return;
    await Promise.race([this.nc.flush().catch(() => undefined), delay(CLOSE_DRAIN_TIMEOUT_MS)]);
  }

  private assertOpen(): void {
    if (this.closed) throw new BusError('closed', 'the bus is closed');
  }
}

/**
 * Connects to NATS and returns the bus. The client reconnects forever with a short wait, so a
 * restarted server is found again within about a second; the first connection must succeed.
 */
export async function connectNatsBus(options: NatsBusOptions): Promise<NatsBus> {
  const nc = await connect({
    servers: options.servers.split(',').map((s) => s.trim()),
    ...(options.name !== undefined && { name: options.name }),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    // Notice a dead server (no TCP reset, e.g. a partition) within ~30 s instead of 4 minutes.
    pingInterval: 10_000,
    maxPingOut: 3,
    // No stack captured per request (an Error for its trace, another for its timer: ~40 µs of
    // an api node's request, docs/performance.md): a failed request becomes a BusError that says
    // which subject and why, and its stack would only point into the client's own code.
    noAsyncTraces: true,
  });
  try {
    // checkAPI false: JetStream is looked up on first stream use, so a bus used only for
    // request/reply works against a server without JetStream.
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    return new NatsBus(nc, jsm, options);
  } catch (error) {
    await nc.close();
    throw error;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
