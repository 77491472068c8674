import { errors, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { Envelope } from '@agent-platform/contracts';
import { BusError } from '../bus.ts';
import type { ConsumeOptions, MessageHeaders, PublishAck } from '../bus.ts';
import { encodeWithin, toNatsHeaders } from './nats-codec.ts';
import { jetStreamName, streamNames, type StreamNames } from './nats-names.ts';

export interface StreamSettings {
  prefix: string;
  dedupWindowMs: number;
  maxAgeMs: number;
  replicas: number;
  publishTimeoutMs: number;
}

/** The JetStream client's own per-request default; one attempt never waits longer. */
const ATTEMPT_TIMEOUT_MS = 5_000;

/**
 * Creates streams and durable consumers on first use and publishes with retries. Streams and
 * consumers are created idempotently, so every process may do it; an existing stream is used as
 * it is (operators may have tuned it), an existing consumer takes the latest caller's
 * `maxDeliver`/`ackWaitMs`.
 */
export class NatsStreams {
  private readonly ensured = new Map<string, Promise<StreamNames>>();
  /** Settles at the next reconnect; publish attempts pending then are retried at once. */
  private nextReconnect = signal();

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly settings: StreamSettings,
  ) {}

  /**
   * At-least-once: retries timeouts and "no responders" (a restarting server, JetStream not up
   * yet) with the same `Nats-Msg-Id` until `publishTimeoutMs`, so a retry of a message the server
   * did store is dropped as a duplicate rather than stored twice.
   */
  async publish(logical: string, envelope: Envelope<unknown>, messageHeaders?: MessageHeaders): Promise<PublishAck> {
    const deadline = Date.now() + this.settings.publishTimeoutMs;
    const data = encodeWithin(this.nc, envelope, `a message for stream ${logical}`, messageHeaders);
    const headers = toNatsHeaders(messageHeaders);
    for (let attempt = 0; ; attempt++) {
      try {
        const names = await this.ensureStream(logical);
        const timeout = Math.max(1, Math.min(ATTEMPT_TIMEOUT_MS, deadline - Date.now()));
        const sending = this.js.publish(names.subject, data, { msgID: envelope.id, timeout, ...(headers === undefined ? {} : { headers }) });
        // A request in flight when the connection dropped gets no answer: do not wait out its
        // timeout, send it again as soon as the connection is back (the id makes that safe).
        sending.catch(() => undefined);
        const ack = await Promise.race([sending, this.nextReconnect.promise]);
        if (ack) return { duplicate: ack.duplicate };
        if (Date.now() >= deadline) throw new BusError('timeout', `publish to ${logical} timed out after ${this.settings.publishTimeoutMs} ms`);
      } catch (error) {
        if (this.nc.isClosed()) throw new BusError('closed', 'the bus is closed');
        if (!isTransient(error) || Date.now() >= deadline) throw error;
        // No responders can also mean the stream was deleted: create it again on the next try.
        if (isNoResponders(error)) this.ensured.delete(logical);
        await pause(Math.min(100 * 2 ** attempt, 1_000, Math.max(0, deadline - Date.now())));
      }
    }
  }

  /** Called by the bus when the connection is re-established. */
  reconnected(): void {
    const current = this.nextReconnect;
    this.nextReconnect = signal();
    current.fire();
  }

  /** The stream's names, creating it (file storage, dedup window, max age) on first use. */
  ensureStream(logical: string): Promise<StreamNames> {
    let ensured = this.ensured.get(logical);
    if (!ensured) {
      ensured = this.createStream(streamNames(this.settings.prefix, logical));
      // A failed creation is not cached: the next call tries again.
      ensured.catch(() => this.ensured.delete(logical));
      this.ensured.set(logical, ensured);
    }
    return ensured;
  }

  /** Creates (or updates) the durable pull consumer; returns its JetStream name. */
  async ensureConsumer(logical: string, options: ConsumeOptions, ackWaitMs: number): Promise<{ stream: string; durable: string }> {
    const { stream } = await this.ensureStream(logical);
    const durable = jetStreamName(options.durable);
    const changeable = { max_deliver: options.maxDeliver, ack_wait: nanos(ackWaitMs) };
    try {
      await this.jsm.consumers.add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        replay_policy: ReplayPolicy.Instant,
        ...changeable,
      });
    } catch (error) {
      if (!(error instanceof JetStreamApiError)) throw error;
      // The stream was deleted under us: create it again on the next try.
      if (error.code === JetStreamApiCodes.StreamNotFound) {
        this.ensured.delete(logical);
        throw error;
      }
      // Servers from 2.10 refuse to "create" a durable that exists with other settings.
      await this.jsm.consumers.update(stream, durable, changeable).catch(() => {
        throw error;
      });
    }
    return { stream, durable };
  }

  private async createStream(names: StreamNames): Promise<StreamNames> {
    try {
      await this.jsm.streams.add({
        name: names.stream,
        subjects: [names.subject],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        duplicate_window: nanos(this.settings.dedupWindowMs),
        max_age: nanos(this.settings.maxAgeMs),
        num_replicas: this.settings.replicas,
      });
    } catch (error) {
      if (error instanceof Error && error.name === 'JetStreamNotEnabled') {
        throw new Error(`JetStream is not enabled on the NATS server (stream ${names.stream}): start nats-server with -js (docs/architecture.md "Bus (NATS)")`, {
          cause: error,
        });
      }
      // "Name already in use with a different configuration": use it if it is ours.
      if (!(error instanceof JetStreamApiError)) throw error;
      const info = await this.jsm.streams.info(names.stream);
      if (!info.config.subjects?.includes(names.subject)) {
        throw new Error(`JetStream stream ${names.stream} exists but does not capture ${names.subject}`, { cause: error });
      }
    }
    return names;
  }
}

function isNoResponders(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return [error, cause].some((e) => e instanceof errors.RequestError && e.isNoResponders());
}

/** Failures a restarting or briefly unreachable server causes; anything else is final. */
function isTransient(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return isNoResponders(error) || [error, cause].some((e) => e instanceof errors.TimeoutError);
}

function signal(): { promise: Promise<undefined>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<undefined>((resolve) => {
    fire = () => resolve(undefined);
  });
  return { promise, fire };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
