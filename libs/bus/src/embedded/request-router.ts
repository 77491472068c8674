import { BusError, headerBytes, headersProblem, payloadTooLarge, replyTooLarge, toRemoteErrorBody } from '../bus.ts';
import type { RequestHandler, RequestOptions, ServeOptions, Subscription } from '../bus.ts';
import { InFlight } from './in-flight.ts';
import { fromWire, toWire } from './wire-copy.ts';

interface Server {
  readonly handler: RequestHandler<unknown, unknown>;
  readonly inFlight: InFlight;
}

/** One queue group on one subject: its members take requests in turn. */
interface Group {
  readonly members: Server[];
  next: number;
}

/**
 * In-process request/reply with NATS queue-group semantics: each request goes to one member of
 * every group serving the subject (usually there is one group) and the first reply wins.
 * Payloads and replies are limited to `maxPayloadBytes` once encoded, as over NATS (bus.ts "Size").
 */
export class RequestRouter {
  private readonly subjects = new Map<string, Map<string, Group>>();

  constructor(private readonly maxPayloadBytes: number) {}

  serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Subscription {
    const queue = options?.queue ?? subject;
    let groups = this.subjects.get(subject);
    if (!groups) {
      groups = new Map();
      this.subjects.set(subject, groups);
    }
    let group = groups.get(queue);
    if (!group) {
      group = { members: [], next: 0 };
      groups.set(queue, group);
    }
    const server: Server = { handler: handler as RequestHandler<unknown, unknown>, inFlight: new InFlight() };
    group.members.push(server);
    return {
      drain: async () => {
        this.remove(subject, queue, server);
        await server.inFlight.idle();
      },
    };
  }

  request<Req, Res>(subject: string, payload: Req, options: RequestOptions): Promise<Res> {
    if (options.signal?.aborted) return Promise.reject(abortedError(subject));
    const wire = toWire(payload);
    const bytes = wire.bytes + headerBytes(options.headers);
    if (bytes > this.maxPayloadBytes) return Promise.reject(payloadTooLarge(`the request on ${subject}`, bytes, this.maxPayloadBytes));
    const invalid = headersProblem(options.headers);
    if (invalid !== undefined) return Promise.reject(invalid);
    const headers = { ...options.headers };
    const chosen = this.pick(subject);
    if (chosen.length === 0) {
      return Promise.reject(new BusError('no_responders', `no responders on ${subject}`));
    }
    return new Promise<Res>((resolve, reject) => {
      let done = false;
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        settle();
      };
      const onAbort = (): void => finish(() => reject(abortedError(subject)));
      const timer = setTimeout(
        () => finish(() => reject(new BusError('timeout', `request on ${subject} timed out after ${options.timeoutMs} ms`))),
        options.timeoutMs,
      );
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const fail = (body: ReturnType<typeof toRemoteErrorBody>): void => finish(() => reject(new BusError('remote', body.message, body)));
      for (const server of chosen) {
        // Each server decodes its own copy, as each would off the wire.
        const run = Promise.resolve().then(() => server.handler(fromWire(wire), { subject, headers: { ...headers } }));
        server.inFlight.track(run).then(
          (reply) => {
            const out = toWire(reply);
            if (out.bytes > this.maxPayloadBytes) fail(replyTooLarge(subject, out.bytes, this.maxPayloadBytes));
            else finish(() => resolve(fromWire<Res>(out)));
          },
          (error: unknown) => fail(toRemoteErrorBody(error)),
        );
      }
    });
  }

  /** Stops every server from taking requests; resolves when their running handlers are done. */
  async drainAll(): Promise<void> {
    const servers = [...this.subjects.values()].flatMap((groups) => [...groups.values()].flatMap((g) => g.members));
    this.subjects.clear();
    await Promise.all(servers.map((s) => s.inFlight.idle()));
  }

  private pick(subject: string): Server[] {
    const chosen: Server[] = [];
    for (const group of this.subjects.get(subject)?.values() ?? []) {
      const server = group.members[group.next % group.members.length];
      group.next = (group.next + 1) % group.members.length;
      if (server) chosen.push(server);
    }
    return chosen;
  }

  private remove(subject: string, queue: string, server: Server): void {
    const groups = this.subjects.get(subject);
    const group = groups?.get(queue);
    if (!groups || !group) return;
    const index = group.members.indexOf(server);
    if (index >= 0) group.members.splice(index, 1);
    if (group.members.length === 0) groups.delete(queue);
    if (groups.size === 0) this.subjects.delete(subject);
  }
}

function abortedError(subject: string): BusError {
  return new BusError('aborted', `request on ${subject} was aborted`);
}
