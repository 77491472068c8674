import type { JsMsg } from '@nats-io/jetstream';
import type { Envelope } from '@agent-platform/contracts';
import { isRetryable } from '../bus.ts';
import type { ConsumeOptions, StreamHandler } from '../bus.ts';
import { fromNatsHeaders, type ErrorSink } from './nats-codec.ts';

export interface DeliveryContext {
  readonly options: ConsumeOptions;
  readonly ackWaitMs: number;
  readonly handler: StreamHandler<unknown>;
  readonly onError: ErrorSink;
  /** The logical stream name, for error reports. */
  readonly subject: string;
}

/**
 * Runs the handler on one JetStream message and settles it: resolve = ack; retryable error before
 * the last attempt = nak with the port's backoff delay (the server redelivers after it); anything
 * else = term and `onDeadLetter`.
 *
 * While the handler runs, `working()` resets the server's ack timer every third of `ackWaitMs`, so
 * a slow but live handler is not redelivered behind its back. This differs on purpose from the
 * embedded adapter, which cannot tell slow from lost and redelivers after `ackWaitMs` while the
 * first run goes on: here `ackWaitMs` bounds how long a crashed or disconnected consumer holds a
 * message, not how long a handler may run.
 */
export async function deliver(msg: JsMsg, ctx: DeliveryContext): Promise<void> {
  const { options, subject } = ctx;
  let envelope: Envelope<unknown>;
  try {
    envelope = msg.json<Envelope<unknown>>();
  } catch (error) {
    settle(ctx, () => msg.term());
    ctx.onError(new Error(`message ${msg.seq} on stream ${subject} is not a JSON envelope`, { cause: error }), { subject });
    return;
  }
  // The envelope's attempt counts deliveries on top of what the publisher set (1 normally).
  const delivery = msg.info.deliveryCount;
  envelope.attempt = (typeof envelope.attempt === 'number' ? envelope.attempt : 1) + delivery - 1;
  const keepAlive = setInterval(() => settle(ctx, () => msg.working()), Math.max(10, Math.floor(ctx.ackWaitMs / 3)));
  keepAlive.unref();
  let failure: { error: unknown } | undefined;
  try {
    await ctx.handler(structuredClone(envelope), { headers: fromNatsHeaders(msg.headers) });
  } catch (error) {
    failure = { error };
  } finally {
    clearInterval(keepAlive);
  }
  if (!failure) return settle(ctx, () => msg.ack());
  if (isRetryable(failure.error) && delivery < options.maxDeliver) {
    const delay = options.backoffMs[Math.min(delivery, options.backoffMs.length) - 1] ?? 0;
    return settle(ctx, () => msg.nak(delay > 0 ? delay : undefined));
  }
  settle(ctx, () => msg.term());
  deadLetter(ctx, envelope, failure.error);
}

export function deadLetter(ctx: Pick<DeliveryContext, 'options' | 'onError' | 'subject'>, envelope: Envelope<unknown>, error: unknown): void {
  try {
    ctx.options.onDeadLetter?.(envelope, error);
  } catch (sinkError) {
    ctx.onError(sinkError, { subject: ctx.subject });
  }
}

/**
 * Acks are fire-and-forget publishes; on a closed connection they throw. The server then
 * redelivers after ackWait, which at-least-once allows, so the error is only reported.
 */
function settle(ctx: Pick<DeliveryContext, 'onError' | 'subject'>, action: () => void): void {
  try {
    action();
  } catch (error) {
    ctx.onError(error, { subject: ctx.subject });
  }
}
