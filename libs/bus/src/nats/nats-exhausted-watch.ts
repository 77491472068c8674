import type { Msg, NatsConnection } from '@nats-io/transport-node';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Envelope } from '@agent-platform/contracts';
import type { ConsumeOptions, Subscription } from '../bus.ts';
import { InFlight } from '../embedded/in-flight.ts';
import { decode, type ErrorSink } from './nats-codec.ts';
import { deadLetter } from './nats-delivery.ts';

export interface ExhaustedWatchDeps {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  readonly durable: string;
  readonly options: ConsumeOptions;
  readonly ackWaitMs: number;
  readonly onError: ErrorSink;
  readonly subject: string;
}

interface MaxDeliveriesAdvisory {
  stream_seq: number;
  deliveries: number;
}

/**
 * Dead-letters messages whose last delivery was never settled: the consumer holding it crashed or
 * lost its connection, and the server gave up after `maxDeliver` deliveries without telling any
 * handler. JetStream announces that on the MAX_DELIVERIES advisory; the consumers of one durable
 * listen in one queue group, so one of them fetches the message and calls `onDeadLetter`.
 * Advisories are core NATS: one sent while no consumer of the durable is connected is missed.
 */
export async function watchExhausted(deps: ExhaustedWatchDeps): Promise<Subscription> {
  const { nc, stream, durable, subject } = deps;
  const inFlight = new InFlight();
  const sub = nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${durable}`, {
    queue: `dead-letters.${stream}.${durable}`,
    callback: (error, msg) => {
      if (error) return deps.onError(error, { subject });
      inFlight.track(report(deps, msg)).catch((e: unknown) => deps.onError(e, { subject }));
    },
  });
  await nc.flush();
  return {
    drain: async () => {
      if (!sub.isClosed()) await sub.drain().catch((e: unknown) => deps.onError(e, { subject }));
      await inFlight.idle();
    },
  };
}

async function report(deps: ExhaustedWatchDeps, msg: Msg): Promise<void> {
  const advisory = decode<MaxDeliveriesAdvisory>(msg.data);
  const stored = await deps.jsm.streams.getMessage(deps.stream, { seq: advisory.stream_seq });
  // Gone already (max age, purge): nothing left to hand over.
  if (!stored) return;
  const envelope = decode<Envelope<unknown>>(stored.data);
  envelope.attempt = (typeof envelope.attempt === 'number' ? envelope.attempt : 1) + advisory.deliveries - 1;
  const error = new Error(`${envelope.id} was delivered ${advisory.deliveries} times and never settled within ackWaitMs ${deps.ackWaitMs}`);
  deadLetter(deps, envelope, error);
}
