import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../deps.ts';
import { pathOf, routeLabel } from './route-label.ts';

/**
 * One concise log line and the HTTP metrics per answered request: request id, method, route
 * pattern, path (without the query string), status and duration. Never headers, query strings
 * or bodies: those are where credentials and customer data live.
 *
 * Because those fields are fixed and credential-free, the line goes through a child logger
 * without the redaction paths (the same level, destinations and buffer): pino's redaction walked
 * every path, wildcards included, on every line, and cost twice as much as formatting it. Lines
 * with caller-supplied fields keep going through the redacting `request.log`.
 */
export function requestObserverHook(deps: ApiDeps) {
  const lineLog = deps.logger.child({}, { redact: [] });
  return async function observe(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const route = routeLabel(request);
    const ms = reply.elapsedTime;
    deps.metrics.observeHttpRequest({ method: request.method, route, status: reply.statusCode, seconds: ms / 1000 });
    if (!lineLog.isLevelEnabled('info')) return;
    lineLog.info(
      { reqId: request.id, method: request.method, route, path: pathOf(request), status: reply.statusCode, ms: Math.round(ms * 10) / 10 },
      'request',
    );
  };
}
