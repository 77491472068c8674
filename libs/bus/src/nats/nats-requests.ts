import { errors, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { BusError, replyTooLarge } from '../bus.ts';
import type { RequestHandler, RequestOptions, ServeOptions, Subscription } from '../bus.ts';
import { InFlight } from '../embedded/in-flight.ts';
import { decode, encode, encodeWithin, errorReply, fromNatsHeaders, maxPayloadOf, readReply, remoteErrorReply, toNatsHeaders, type ErrorSink } from './nats-codec.ts';
import type { ConnectionGate } from './nats-connection-gate.ts';
import { assertSubject } from './nats-names.ts';

/** After a reconnection, how long "no responders" means servers are still re-subscribing. */
const RECONNECT_GRACE_MS = 5_000;
/** Pause between tries of a request that met no responders within the grace window. */
const NO_RESPONDERS_RETRY_MS = 50;

/**
 * How long a served request's reply waits for a lost connection to come back before it is sent
 * anyway (and lost): past this the requester has almost certainly given up.
 */
const REPLY_WAIT_MS = 10_000;

/**
 * Request/reply over core NATS: servers subscribe in a queue group, so the server picks one member
 * per request; the requester's wait is always bounded by `timeoutMs`. A subject nobody serves
 * answers with NATS's "no responders" status at once, which becomes `BusError('no_responders')`.
 * While the connection is down, a request (and a served request's reply) waits for it to come
 * back instead of being published into a buffer the client would discard (`ConnectionGate`).
 */
export class NatsRequests {
  private readonly servers = new Set<Subscription>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly onError: ErrorSink,
    private readonly gate: ConnectionGate,
  ) {}

  async request<Req, Res>(subject: string, payload: Req, options: RequestOptions): Promise<Res> {
    assertSubject(subject);
    const { signal } = options;
    if (signal?.aborted) throw abortedError(subject);
    const data = encodeWithin(this.nc, payload, `the request on ${subject}`, options.headers);
    const pending = this.send<Res>(subject, data, options.timeoutMs, toNatsHeaders(options.headers));
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

  /** Waits for the connection within the request's own time budget, then sends with what is left of it. */
  private async send<Res>(subject: string, data: Uint8Array, timeoutMs: number, headers: MsgHdrs | undefined): Promise<Res> {
    const started = Date.now();
    if (!(await this.gate.whenUp(timeoutMs))) {
      if (this.gate.isClosed) throw new BusError('closed', 'the bus is closed');
      throw new BusError('timeout', `request on ${subject} timed out after ${timeoutMs} ms: the bus stayed disconnected`);
    }
    for (;;) {
      const remaining = Math.max(1, timeoutMs - (Date.now() - started));
      try {
        return readReply<Res>(await this.nc.request(subject, data, { timeout: remaining, ...(headers === undefined ? {} : { headers }) }));
      } catch (error) {
        const mapped = toBusError(error, subject, timeoutMs);
        // Right after a server restart every client reconnects on its own schedule: a request
        // can reach the server before the serving connections have re-subscribed. Within the
        // grace window that is "not yet", not "nobody": try again within the caller's budget.
        const inGrace = this.gate.sinceReconnectMs() < RECONNECT_GRACE_MS;
        const timeLeft = timeoutMs - (Date.now() - started) > NO_RESPONDERS_RETRY_MS;
        if (!(mapped instanceof BusError && mapped.code === 'no_responders' && inGrace && timeLeft)) throw mapped;
        await new Promise((resolve) => setTimeout(resolve, NO_RESPONDERS_RETRY_MS));
      }
    }
  }

  async serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Promise<Subscription> {
    assertSubject(subject);
    const inFlight = new InFlight();
    const sub = this.nc.subscribe(subject, {
      queue: options?.queue ?? subject,
      callback: (error, msg) => {
        if (error) return this.onError(error, { subject });
        inFlight.track(answer(this.nc, msg, handler, subject, this.gate)).catch((e: unknown) => this.onError(e, { subject }));
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

/**
 * Runs the handler and sends its reply. A reply over the server's `max_payload` would make
 * `respond` throw and leave the requester waiting for its timeout: it is replaced by a
 * SizeLimitExceeded error reply, which is small and goes out at once (bus.ts "Size").
 */
async function answer<Req, Res>(nc: NatsConnection, msg: Msg, handler: RequestHandler<Req, Res>, subject: string, gate: ConnectionGate): Promise<void> {
  let reply: { data: Uint8Array; headers?: ReturnType<typeof errorReply>['headers'] };
  try {
    const result = await handler(decode<Req>(msg.data), { subject, headers: fromNatsHeaders(msg.headers) });
    reply = { data: encode(result) };
  } catch (error) {
    reply = errorReply(error);
  }
  const max = maxPayloadOf(nc);
  if (reply.data.length > max) reply = remoteErrorReply(replyTooLarge(subject, reply.data.length, max));
  await gate.whenUp(REPLY_WAIT_MS);
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
