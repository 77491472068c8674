import { RegistryHealth } from '@agent-platform/contracts';
import { probeEngines, type Engines } from '@agent-platform/engines';
import type { ArchiveStore } from '@agent-platform/registry-core';
import type { RegistryApp } from '../registry-app.ts';
import type { RegistryRouteDeps } from './registry-route.ts';

/** An archive store that does not answer in time is reported down rather than hanging the check. */
const ARCHIVES_TIMEOUT_MS = 2000;

async function probeArchives(archives: ArchiveStore): Promise<RegistryHealth['archives']> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<RegistryHealth['archives']>((resolve) => {
    timer = setTimeout(
      () => resolve({ status: 'down', detail: 'health check timed out' }),
      ARCHIVES_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([
      archives.health().catch((err: unknown) => ({ status: 'down' as const, detail: String(err) })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /health`: the api's engine report (the same for a load balancer reading either surface)
 * plus the archive store. Public, like the api's (spec §Authentication rule 2); 503 when any is down.
 */
export function healthRoutes(engines: Pick<Engines, 'store' | 'bus' | 'queue'>) {
  return (app: RegistryApp, deps: RegistryRouteDeps): void => {
    const startedAt = deps.clock.now().getTime();
    app.get(
      '/health',
      {
        config: { registryAccess: 'public' },
        schema: { response: { 200: RegistryHealth, 503: RegistryHealth } },
      },
      async (_request, reply) => {
        const [{ healthy, engines: report }, archives] = await Promise.all([
          probeEngines(engines),
          probeArchives(deps.archives),
        ]);
        const ok = healthy && archives.status === 'ok';
        return reply.code(ok ? 200 : 503).send({
          status: ok ? 'ok' : 'degraded',
          version: deps.version,
          uptime_secs: Math.max(0, Math.floor((deps.clock.now().getTime() - startedAt) / 1000)),
          engines: report,
          archives,
        });
      },
    );
  };
}
