import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  bindToSpan,
  openSpan,
  tracingEnabled,
  withCorrelation,
  type OpenSpan,
} from '@agent-platform/observability';
import type { ApiApp } from '../api-app.ts';
import { routeLabel } from './route-label.ts';

const spans = new WeakMap<FastifyRequest, OpenSpan>();

/**
 * One server span per HTTP request while tracing is on (docs/observability.md "Spans"): it
 * continues the caller's W3C `traceparent`, carries the request id as `correlation_id` (what
 * `send` and `chat` give the invocation), and every bus message and job the request causes
 * continues it. Named `<method> <route pattern>` with the status code once answered; never the
 * concrete URL, query string, headers or body.
 *
 * A caller's `baggage` header is not taken: only the trace position crosses the edge, so a client
 * cannot set what the platform's own spans say. Installed first, so every later hook, the body
 * parser and the handler run inside the span (the request and response emitters are bound to it).
 * Not installed at all while tracing is off.
 */
export function installRequestTracing(app: ApiApp): void {
  if (!tracingEnabled()) return;
  app.addHook('onRequest', (request, reply, done) => {
    const span = openSpan(request.method, {
      role: 'server',
      carrier: traceHeadersOf(request),
      attributes: { 'http.request.method': request.method, 'url.scheme': request.protocol },
    });
    if (span === undefined) return done();
    spans.set(request, span);
    bindToSpan(span, request.raw);
    bindToSpan(span, reply.raw);
    span.run(() => withCorrelation(request.id, done));
  });
  app.addHook('onResponse', async (request, reply) => finish(request, reply));
  app.addHook('onRequestAbort', async (request) => finish(request, null));
}

function finish(request: FastifyRequest, reply: FastifyReply | null): void {
  const span = spans.get(request);
  if (span === undefined) return;
  spans.delete(request);
  const route = routeLabel(request);
  span.setName(`${request.method} ${route}`);
  span.setAttributes({ 'http.route': route, 'http.response.status_code': reply?.statusCode });
  if (reply === null) span.fail(Object.assign(new Error('aborted'), { category: 'ClientAborted' }));
  else if (reply.statusCode >= 500)
    span.fail(Object.assign(new Error('server error'), { category: `HTTP ${reply.statusCode}` }));
  span.end();
}

function traceHeadersOf(request: FastifyRequest): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  for (const name of ['traceparent', 'tracestate']) {
    const value = request.headers[name];
    if (typeof value === 'string') carrier[name] = value;
  }
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}
