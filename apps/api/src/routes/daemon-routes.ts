import type { AddressInfo } from 'node:net';
import { ConfigReloaded, ConfigView, DaemonStatus, Health, LogsQuery, LogsView, ShutdownAccepted } from '@agent-platform/contracts';
import { probeEngines } from '@agent-platform/engines';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';

const TAGS = ['daemon'];

function uptimeSecs(deps: ApiDeps, startedAt: Date): number {
  return Math.max(0, Math.floor((deps.clock.now().getTime() - startedAt.getTime()) / 1000));
}

/**
 * Spec §Endpoints "Health and daemon control" (backups live with the backup routes). GET /health
 * answers 200 `ok` or 503 `degraded` (an engine is down) so that load balancers and orchestrators
 * can act on the status code alone (docs/http.md).
 */
export const daemonRoutes: RoutePlugin = (app, deps) => {
  const startedAt = deps.clock.now();

  app.get(
    '/health',
    {
      config: { action: 'public' },
      schema: { tags: TAGS, summary: 'Liveness and engine health (no authentication)', security: [], response: { 200: Health, 503: Health } },
    },
    async (_request, reply) => {
      const { healthy, engines } = await probeEngines(deps);
      return reply.code(healthy ? 200 : 503).send({
        status: healthy ? 'ok' : 'degraded',
        version: deps.version,
        uptime_secs: uptimeSecs(deps, startedAt),
        engines,
      });
    },
  );

  // What a browser asks for on its own when it opens any page of the origin (Swagger UI at /docs,
  // the dashboard): no icon, and above all not a failed authentication to audit and count towards
  // the client's lockout (docs/http.md).
  app.get(
    '/favicon.ico',
    { config: { action: 'public' }, schema: { hide: true, response: { 204: Type.Null() } } },
    async (_request, reply) => reply.code(204).send(null),
  );

  app.get(
    '/metrics',
    {
      config: { action: 'MetricsRead' },
      schema: { tags: TAGS, summary: 'Prometheus exposition (text/plain; version=0.0.4)', response: { 200: Type.String() } },
    },
    async (_request, reply) => reply.type(deps.metrics.contentType).send(await deps.metrics.render()),
  );

  app.get(
    '/config',
    { config: { action: 'ConfigRead' }, schema: { tags: TAGS, summary: 'The config file, secrets redacted', response: { 200: ConfigView } } },
    async () => ({ config: deps.config.redactedText() }),
  );

  app.post(
    '/config/reload',
    {
      config: { action: 'ConfigReload', audit: 'config' },
      schema: { tags: TAGS, summary: 'Re-read the config file; on error the running config stays', response: { 200: ConfigReloaded } },
    },
    async (request) => {
      try {
        const { restart_required } = await deps.config.reload();
        deps.metrics.configReloadsTotal.inc({ result: 'success' });
        request.log.info({ restart_required }, 'config reloaded');
        return { status: 'reloaded' as const, restart_required };
      } catch (error) {
        deps.metrics.configReloadsTotal.inc({ result: 'failure' });
        request.log.warn({ err: error }, 'config reload refused');
        throw error;
      }
    },
  );

  app.post(
    '/shutdown',
    {
      config: { action: 'DaemonShutdown', audit: 'system' },
      schema: { tags: TAGS, summary: 'Graceful shutdown: in-flight requests finish', response: { 202: ShutdownAccepted } },
    },
    async (request, reply) => {
      request.log.warn({ identity: request.caller.identity }, 'shutdown requested over HTTP');
      // Stop only once this 202 is on the wire (stopping first would cut it off), and only from
      // the handler: a route-level onResponse hook would also fire for a 403 or 415 answered by
      // the shared hooks, letting any caller stop the platform.
      reply.raw.once('finish', () => deps.requestShutdown());
      return reply.code(202).send({ status: 'shutting_down' as const });
    },
  );

  app.get(
    '/logs',
    {
      config: { action: 'LogRead' },
      schema: { tags: TAGS, summary: 'Recent log lines (JSON text), oldest first', querystring: LogsQuery, response: { 200: LogsView } },
    },
    async (request) => ({ lines: deps.logBuffer.tail(request.query.lines ?? 100) }),
  );

  app.get(
    '/status',
    { config: { action: 'StatusRead' }, schema: { tags: TAGS, summary: 'What runs, where and since when', response: { 200: DaemonStatus } } },
    async () => {
      const config = deps.config.current();
      const bound: AddressInfo | string | null = app.server.listening ? app.server.address() : null;
      return {
        version: deps.version,
        pid: process.pid,
        started_at: startedAt.toISOString(),
        uptime_secs: uptimeSecs(deps, startedAt),
        auth_mode: config.auth.mode,
        surfaces: config.surfaces,
        runtime: { bus: config.runtime.bus, store: config.runtime.store, queue: config.runtime.queue },
        listen: config.server.listen,
        address: bound === null ? null : typeof bound === 'string' ? `unix:${bound}` : `${bound.address}:${bound.port}`,
        tls: config.server.tls !== undefined,
      };
    },
  );
};
