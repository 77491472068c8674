import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../deps.ts';
import { pathOf, routeLabel } from './route-label.ts';

/**
 * One concise log line and the HTTP metrics per answered request: method, route pattern, path,
 * status, duration and (through the request logger) the request id. Never headers or bodies:
 * those are where credentials and customer data live.
 */
export function requestObserverHook(deps: ApiDeps) {
  return async function observe(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const route = routeLabel(request);
    const ms = reply.elapsedTime;
    deps.metrics.observeHttpRequest({ method: request.method, route, status: reply.statusCode, seconds: ms / 1000 });
    request.log.info(
      { method: request.method, route, path: pathOf(request), status: reply.statusCode, ms: Math.round(ms * 10) / 10 },
      'request',
    );
  };
}
