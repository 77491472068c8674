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
 *
 * Size: every payload (request, reply, envelope, notification) is at most `maxPayloadBytes()`
 * once encoded as JSON (UTF-8): the NATS server's `max_payload` (1 MiB by default), and the same
 * default in the embedded adapter so a payload that works in one process works in a fleet. A
 * request, publish or notify over it fails at once with `BusError('payload_too_large')` and sends
 * nothing. A handler's reply over it is not sent either: the requester gets, at once,
 * `BusError('remote')` with category `SizeLimitExceeded` (never a wait for its timeout).
 *
 * Headers: a request and a stream message may carry `MessageHeaders` beside their payload (the W3C
 * trace context, docs/observability.md "Propagation"); the handler gets them exactly as sent, and
 * an empty object when none were. They are not part of the payload: the envelope and the request
 * body are unchanged, and a consumer that ignores headers works the same. Notifications carry none.
 */
export interface Bus {
  request<Req, Res>(subject: string, payload: Req, options: RequestOptions): Promise<Res>;
  serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Promise<Subscription>;

  publish<T>(stream: string, envelope: Envelope<T>, options?: PublishOptions): Promise<PublishAck>;
  consume<T>(stream: string, options: ConsumeOptions, handler: StreamHandler<T>): Promise<Subscription>;

  notify<T>(subject: string, payload: T): Promise<void>;
  listen<T>(subject: string, handler: (payload: T) => void): Promise<Subscription>;

  /** The largest encoded payload this bus carries, in bytes (see "Size" above). */
  maxPayloadBytes(): number;

  health(): Promise<{ kind: string; status: 'ok' | 'down'; detail?: string }>;
  close(): Promise<void>;
}

/**
 * Text headers of one message: names are HTTP-style tokens (letters, digits, `-`), not starting
 * with `Nats-` (NATS's own); values are one line. Headers count towards the payload limit.
 */
export type MessageHeaders = Readonly<Record<string, string>>;

export interface RequestOptions {
  timeoutMs: number;
  /** Aborting cancels the wait; the caller gets `BusError('aborted')`. */
  signal?: AbortSignal;
  headers?: MessageHeaders;
}

export interface PublishOptions {
  /** Stored with the message and given to every delivery of it. */
  headers?: MessageHeaders;
}

export interface ServeOptions {
  /** Servers sharing a queue name split the requests; default: the subject. */
  queue?: string;
}

export type RequestHandler<Req, Res> = (payload: Req, context: { subject: string; headers: MessageHeaders }) => Promise<Res>;

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
export type StreamHandler<T> = (envelope: Envelope<T>, delivery: { headers: MessageHeaders }) => Promise<void>;

export interface Subscription {
  /** Stops receiving new messages and waits for in-flight handlers to finish. */
  drain(): Promise<void>;
}

export type BusErrorCode = 'timeout' | 'no_responders' | 'remote' | 'aborted' | 'closed' | 'payload_too_large';

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

const HEADER_NAME = /^[A-Za-z0-9-]+$/;

/** Why NATS could not carry these headers (or would read one as its own); undefined when it can. */
export function headersProblem(headers: MessageHeaders | undefined): Error | undefined {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!HEADER_NAME.test(name) || /^nats-/i.test(name)) return new Error(`invalid message header name "${name}"`);
    if (/[\r\n]/.test(value)) return new Error(`the value of message header "${name}" spans several lines`);
  }
  return undefined;
}

/** Refuses headers NATS could not carry, before anything is sent. */
export function assertHeaders(headers: MessageHeaders | undefined): void {
  const problem = headersProblem(headers);
  if (problem !== undefined) throw problem;
}

/**
 * The bytes headers add to a message on NATS (`NATS/1.0\r\n`, `name: value\r\n` each, a closing
 * `\r\n`): counted against the payload limit by both adapters.
 */
export function headerBytes(headers: MessageHeaders | undefined): number {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return 0;
  return entries.reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value) + 4, 12);
}

/** NATS's default `max_payload`; the embedded adapter's default too. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** A payload over the bus's limit: nothing was sent. */
export function payloadTooLarge(what: string, bytes: number, maxBytes: number): BusError {
  return new BusError('payload_too_large', `${what} is ${bytes} bytes once encoded, over the bus's maximum payload of ${maxBytes} bytes`);
}

/**
 * The body a requester gets instead of a reply over the limit: the handler's work is done, but its
 * result cannot travel; callers that must not charge for an undelivered reply check the size
 * before they commit (see the agent worker).
 */
export function replyTooLarge(subject: string, bytes: number, maxBytes: number): RemoteErrorBody {
  return {
    category: 'SizeLimitExceeded',
    message: `the reply on ${subject} is ${bytes} bytes once encoded, over the bus's maximum payload of ${maxBytes} bytes`,
    details: { bytes, max_bytes: maxBytes },
  };
}
