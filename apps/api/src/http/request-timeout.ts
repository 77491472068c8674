import { Errors } from '@agent-platform/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConfigHolder } from '../deps.ts';

/**
 * Spec §Limits: a request running longer than `request_timeout_secs` is cut off with 408. The
 * limit is read per request so that a config reload applies to the next one. The handler keeps
 * running (it cannot be cancelled from here); its late answer is dropped by Fastify.
 */
export function requestTimeoutHook(config: ConfigHolder) {
  return async function requestTimeout(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const secs = config.current().server.request_timeout_secs;
    const timer = setTimeout(() => {
      if (!reply.sent && !reply.raw.headersSent) void reply.send(Errors.requestTimeout(secs));
    }, secs * 1000);
    timer.unref();
    // 'close' fires once the response is written or the client went away: either way, done.
    reply.raw.once('close', () => clearTimeout(timer));
  };
}
