import type { Envelope } from '@agent-platform/contracts';

/**
 * The bus port. Three kinds of traffic, matching what NATS gives us and what the embedded
 * adapter reproduces in-process (pinned by the bus conformance suite in testkit):
 *
 * 1. Request/reply through a queue group (invocations): exactly one server of the group gets
 *    each request; the caller always sets a timeout. No server at all fails at once with
 *    `BusError('no_responders')`, never a hang; a slow server fails with `BusError('timeout')`.
 *    An error thrown by the handler reaches the caller as `BusError('remote')` carrying the
 *    handler's `{category, message, details}` when it had them.
 * 2. Durable streams (workflow steps, channel messages): `publish` is at-least-once and
 *    de-duplicates by `envelope.id` within the dedup window; `consume` delivers each message to
 *    one consumer of a durable name, acks when the handler resolves, redelivers with backoff when
 *    it throws a retryable error, and gives up after `maxDeliver` attempts (or at once on a
 *    non-retryable error), calling `onDeadLetter`.
 * 3. Notifications (cache invalidation, abort signals): fire-and-forget fan-out to every
 *    listener in every process; may be lost if no one listens.
 */
export interface Bus {
  request<Req, Res>(subject: string, payload: Req, options: RequestOptions): Promise<Res>;
  serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Promise<Subscription>;

  publish<T>(stream: string, envelope: Envelope<T>): Promise<PublishAck>;
  consume<T>(stream: string, options: ConsumeOptions, handler: StreamHandler<T>): Promise<Subscription>;

  notify<T>(subject: string, payload: T): Promise<void>;
  listen<T>(subject: string, handler: (payload: T) => void): Promise<Subscription>;

  health(): Promise<{ kind: string; status: 'ok' | 'down'; detail?: string }>;
  close(): Promise<void>;
}

export interface RequestOptions {
  timeoutMs: number;
  /** Aborting cancels the wait; the caller gets `BusError('aborted')`. */
  signal?: AbortSignal;
}

export interface ServeOptions {
  /** Servers sharing a queue name split the requests; default: the subject. */
  queue?: string;
}

export type RequestHandler<Req, Res> = (payload: Req, context: { subject: string }) => Promise<Res>;

export interface PublishAck {
  /** True when a message with the same `id` was already accepted and this one was dropped. */
  duplicate: boolean;
}

export interface ConsumeOptions {
  /** Consumers sharing a durable name split the messages and resume where the name left off. */
  durable: string;
  /** Total delivery attempts before the message is dead-lettered. */
  maxDeliver: number;
  /** Delay before redelivery n (index n-1); the last value repeats. */
  backoffMs: readonly number[];
  /** How long a delivery may run before it is presumed lost and redelivered. */
  ackWaitMs?: number;
  /** Messages one consumer handles at once. */
  concurrency?: number;
  onDeadLetter?: (envelope: Envelope<unknown>, error: unknown) => void;
}

/** Resolve = ack. Throw a retryable error = redeliver later. Throw otherwise = dead-letter. */
export type StreamHandler<T> = (envelope: Envelope<T>) => Promise<void>;

export interface Subscription {
  /** Stops receiving new messages and waits for in-flight handlers to finish. */
  drain(): Promise<void>;
}

export type BusErrorCode = 'timeout' | 'no_responders' | 'remote' | 'aborted' | 'closed';

export interface RemoteErrorBody {
  category: string;
  message: string;
  details?: Record<string, unknown>;
}

export class BusError extends Error {
  constructor(
    readonly code: BusErrorCode,
    message: string,
    readonly remote?: RemoteErrorBody,
  ) {
    super(message);
    this.name = 'BusError';
  }
}

/** Whether a handler error should be redelivered: errors opt in with `retryable: true`. */
export function isRetryable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === true;
}

/** The wire body of a handler error, without stack or cause. */
export function toRemoteErrorBody(error: unknown): RemoteErrorBody {
  if (typeof error === 'object' && error !== null && typeof (error as { category?: unknown }).category === 'string') {
    const e = error as { category: string; message?: unknown; details?: Record<string, unknown> };
    const body: RemoteErrorBody = { category: e.category, message: typeof e.message === 'string' ? e.message : '' };
    if (e.details !== undefined) body.details = e.details;
    return body;
  }
  return { category: 'Internal', message: 'internal error in a bus handler' };
}
