import type { CorsConfig } from '@agent-platform/contracts';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Static } from 'typebox';
import type { ApiApp } from '../api-app.ts';
import type { ConfigHolder } from '../deps.ts';

/** Headers a browser script may read on our responses. */
const EXPOSED = 'Api-Version, Retry-After, WWW-Authenticate, X-Request-Id';
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';

type CorsSettings = Static<typeof CorsConfig>;

/**
 * `[server.cors]`, read per request (reload applies). Absent: no CORS headers at all, and the
 * hook returns at once (this replaces @fastify/cors, whose delegator rebuilt and normalized its
 * options on every request whether CORS was configured or not). Registered before every other
 * hook so that a preflight (which carries no credential) is answered before authentication, as
 * browsers require. The headers are those @fastify/cors wrote for the same settings.
 */
export async function installCors(app: ApiApp, config: ConfigHolder): Promise<void> {
  app.addHook('onRequest', function cors(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const settings = config.current().server.cors;
    if (settings === undefined || settings.allowed_origins.length === 0) {
      done();
      return;
    }
    addCorsHeaders(request, reply, settings);
    if (request.raw.method !== 'OPTIONS') {
      done();
      return;
    }
    answerPreflight(request, reply, settings);
  });
  // Gives every path an OPTIONS route, so that a preflight reaches the hook above (which answers
  // it) whatever methods the path has. Without CORS configured, OPTIONS is not found.
  app.options('*', { schema: { hide: true } }, (_request, reply) => {
    reply.callNotFound();
  });
}

function addCorsHeaders(request: FastifyRequest, reply: FastifyReply, settings: CorsSettings): void {
  // The answer depends on the request's Origin, so caches must key on it.
  appendVary(reply, 'Origin');
  const origin = allowedOrigin(request.headers.origin, settings);
  if (origin !== null) reply.header('Access-Control-Allow-Origin', origin);
  if (settings.allow_credentials) reply.header('Access-Control-Allow-Credentials', 'true');
  reply.header('Access-Control-Expose-Headers', EXPOSED);
}

/** The Access-Control-Allow-Origin value for `origin`, or null when it may not call us. */
function allowedOrigin(origin: string | undefined, settings: CorsSettings): string | null {
  // libs/config refuses "*" together with allow_credentials (browsers reject that pair).
  if (settings.allowed_origins.includes('*')) return '*';
  return origin !== undefined && settings.allowed_origins.includes(origin) ? origin : null;
}

function answerPreflight(request: FastifyRequest, reply: FastifyReply, settings: CorsSettings): void {
  if (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined) {
    reply.status(400).type('text/plain').send('Invalid Preflight Request');
    return;
  }
  reply.header('Access-Control-Allow-Methods', METHODS);
  appendVary(reply, 'Access-Control-Request-Headers');
  const requested = request.headers['access-control-request-headers'];
  if (requested !== undefined) reply.header('Access-Control-Allow-Headers', requested);
  reply.header('Access-Control-Max-Age', String(settings.max_age_secs));
  // Some browsers wait for a body on a 204 without an explicit zero length.
  reply.code(204).header('Content-Length', '0').send();
}

function appendVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  if (current === undefined) reply.header('Vary', field);
  else if (!String(current).split(',').some((f) => f.trim().toLowerCase() === field.toLowerCase())) reply.header('Vary', `${String(current)}, ${field}`);
}
