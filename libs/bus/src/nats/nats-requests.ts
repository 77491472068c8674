import { errors, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { BusError } from '../bus.ts';
import type { RequestHandler, RequestOptions, ServeOptions, Subscription } from '../bus.ts';
import { InFlight } from '../embedded/in-flight.ts';
import { decode, encode, errorReply, readReply, type ErrorSink } from './nats-codec.ts';
import { assertSubject } from './nats-names.ts';

/**
 * Request/reply over core NATS: servers subscribe in a queue group, so the server picks one member
 * per request; the requester's wait is always bounded by `timeoutMs`. A subject nobody serves
 * answers with NATS's "no responders" status at once, which becomes `BusError('no_responders')`.
 */
export class NatsRequests {
  private readonly servers = new Set<Subscription>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly onError: ErrorSink,
  ) {}

  async request<Req, Res>(subject: string, payload: Req, options: RequestOptions): Promise<Res> {
    assertSubject(subject);
    const { signal } = options;
    if (signal?.aborted) throw abortedError(subject);
    const pending = this.nc.request(subject, encode(payload), { timeout: options.timeoutMs }).then(
      (msg) => readReply<Res>(msg),
      (error: unknown) => {
        throw toBusError(error, subject, options.timeoutMs);
      },
    );
    if (!signal) return pending;
    // NATS requests cannot be cancelled: the caller stops waiting, the reply (or timeout) that
    // comes later is dropped.
    pending.catch(() => undefined);
    let onAbort!: () => void;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(abortedError(subject));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([pending, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Promise<Subscription> {
    assertSubject(subject);
    const inFlight = new InFlight();
    const sub = this.nc.subscribe(subject, {
      queue: options?.queue ?? subject,
      callback: (error, msg) => {
        if (error) return this.onError(error, { subject });
        inFlight.track(answer(msg, handler, subject)).catch((e: unknown) => this.onError(e, { subject }));
      },
    });
    // The server must know the subscription before we say we serve: a request sent from another
    // connection right after would otherwise meet no responders.
    await this.nc.flush();
    const subscription: Subscription = {
      drain: async () => {
        this.servers.delete(subscription);
        // Drain (not unsubscribe) still answers requests that already reached this client.
        if (!sub.isClosed()) await sub.drain().catch((e: unknown) => this.onError(e, { subject }));
        await inFlight.idle();
      },
    };
    this.servers.add(subscription);
    return subscription;
  }

  async drainAll(): Promise<void> {
    await Promise.all([...this.servers].map((s) => s.drain()));
  }
}

async function answer<Req, Res>(msg: Msg, handler: RequestHandler<Req, Res>, subject: string): Promise<void> {
  let reply: { data: Uint8Array; headers?: ReturnType<typeof errorReply>['headers'] };
  try {
    const result = await handler(decode<Req>(msg.data), { subject });
    reply = { data: encode(result) };
  } catch (error) {
    reply = errorReply(error);
  }
  msg.respond(reply.data, reply.headers ? { headers: reply.headers } : undefined);
}

export function toBusError(error: unknown, subject: string, timeoutMs: number): unknown {
  if (error instanceof BusError) return error;
  if (error instanceof errors.TimeoutError) {
    return new BusError('timeout', `request on ${subject} timed out after ${timeoutMs} ms`);
  }
  if (error instanceof errors.RequestError && error.isNoResponders()) {
    return new BusError('no_responders', `no responders on ${subject}`);
  }
  if (error instanceof errors.ClosedConnectionError || error instanceof errors.DrainingConnectionError) {
    return new BusError('closed', 'the bus is closed');
  }
  if (error instanceof errors.RequestError && /connection closed/.test(error.message)) {
    return new BusError('closed', 'the bus closed while the request was pending');
  }
  return error;
}

function abortedError(subject: string): BusError {
  return new BusError('aborted', `request on ${subject} was aborted`);
}
