import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** Writes one server-sent event frame (text/event-stream). */
export type WriteFrame = (frame: string) => void;

/** `event: <name>` + `data: <json>`, the frame of a named event. */
export function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** `data: <json>` (or a raw string such as `[DONE]`), the frame of an unnamed event (OpenAI streams). */
export function sseData(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** Whether the client asked for server-sent events (`Accept: text/event-stream`). */
export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

/**
 * Streams `work`'s frames as the body of the reply, opening the stream lazily: the handler's
 * promise resolves at the first frame, with the reply sending the stream. Work that fails before writing anything
 * rejects instead, so the client gets a normal error response with its real HTTP status (a 403
 * licence refusal, a 429) rather than a 200 stream holding an error. A failure after the first
 * frame is written into the stream by `onLateError`.
 *
 * The body goes through `reply.send` like any other (no hijack), so the audit, response-header
 * and metrics hooks run as usual; the request timeout cannot fire once headers are out.
 */
export function lazyEventStream(
  reply: FastifyReply,
  work: (write: WriteFrame) => Promise<void>,
  onLateError: (error: unknown, write: WriteFrame) => void,
): Promise<FastifyReply> {
  const stream = new PassThrough();
  let opened = false;
  return new Promise<FastifyReply>((resolve, reject) => {
    const open = (): void => {
      if (opened) return;
      opened = true;
      reply.code(200).headers({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      // Resolving with the reply (a thenable) makes the handler wait for the stream to finish,
      // as Fastify asks of handlers that call reply.send themselves.
      resolve(reply.send(stream));
    };
    const write: WriteFrame = (frame) => {
      open();
      if (!stream.destroyed) stream.write(frame);
    };
    work(write).then(
      () => {
        open();
        stream.end();
      },
      (error: unknown) => {
        // Passed on as thrown (a PlatformError, usually), for the error handler to map.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        if (!opened) return reject(error);
        onLateError(error, write);
        stream.end();
      },
    );
  });
}

/** Aborts when the client goes away before its response was fully written. */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('the client closed the connection'));
  });
  return controller.signal;
}
