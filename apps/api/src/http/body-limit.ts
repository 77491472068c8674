import { Errors } from '@agent-platform/domain';
import type { FastifyRequest } from 'fastify';
import { Transform, type TransformCallback } from 'node:stream';
import type { ConfigHolder } from '../deps.ts';
import { withHttpStatus } from './http-status.ts';

/** 413 with category SizeLimitExceeded (DECISIONS D7; the spec's table says 500 for other cases). */
function tooLarge(declared: number, limit: number) {
  return withHttpStatus(Errors.bodyTooLarge(declared, limit), 413);
}

/**
 * Spec §Limits: the declared Content-Length is checked against `body_limit_bytes` (current config)
 * before a byte of the body is read. Runs after the role check, so an unauthorized caller still
 * sees 403 first.
 */
export function bodyLimitHook(config: ConfigHolder) {
  return async function bodyLimit(request: FastifyRequest): Promise<void> {
    const declared = request.headers['content-length'];
    if (declared === undefined) return;
    const length = Number(declared);
    const limit = config.current().server.body_limit_bytes;
    if (Number.isFinite(length) && length > limit) throw tooLarge(length, limit);
  };
}

/**
 * A chunked body declares no length: count bytes as they stream in and stop at the current limit.
 * (Fastify's own `bodyLimit` is only a generous backstop, fixed at boot.)
 */
export function bodyCounterHook(config: ConfigHolder) {
  return async function bodyCounter(_request: FastifyRequest, _reply: unknown, payload: NodeJS.ReadableStream) {
    const limit = config.current().server.body_limit_bytes;
    let seen = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
        seen += chunk.length;
        if (seen > limit) done(tooLarge(seen, limit));
        else done(null, chunk);
      },
    });
    return payload.pipe(counter);
  };
}
