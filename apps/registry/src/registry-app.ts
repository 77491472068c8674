import Fastify, { LogController } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { installErrorHandling, type ApiApp } from '@agent-platform/api';
import { Health } from '@agent-platform/contracts';
import type { Clock } from '@agent-platform/domain';
import { probeEngines, type Engines } from '@agent-platform/engines';
import type { Logger } from '@agent-platform/observability';

/** The same Fastify shape as the api's (TypeBox types from schemas to handlers). */
export type RegistryApp = ApiApp;

export interface RegistryAppDeps {
  engines: Pick<Engines, 'store' | 'bus' | 'queue'>;
  logger: Logger;
  clock: Clock;
  version: string;
}

/**
 * The registry surface (spec §Registry surface, its own listener). Today it serves `GET /health`
 * only, the same report as the api's; every other path is 404 in the spec's error envelope
 * through the api's one error handler (STYLE §3). Its routes, keys and auth settings arrive
 * with the registry issue; this is the process they will live in.
 */
export function buildRegistryApp(deps: RegistryAppDeps): RegistryApp {
  const app = Fastify({
    loggerInstance: deps.logger,
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as RegistryApp;
  // The error model is the api's: one mapping from category to status for every surface.
  installErrorHandling(app);
  const startedAt = deps.clock.now().getTime();

  app.get('/health', { schema: { response: { 200: Health, 503: Health } } }, async (_request, reply) => {
    const { healthy, engines } = await probeEngines(deps.engines);
    return reply.code(healthy ? 200 : 503).send({
      status: healthy ? 'ok' : 'degraded',
      version: deps.version,
      uptime_secs: Math.max(0, Math.floor((deps.clock.now().getTime() - startedAt) / 1000)),
      engines,
    });
  });
  return app;
}
