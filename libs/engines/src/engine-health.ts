import type { Engines } from './open-engines.ts';

export type EngineReport = { kind: string; status: 'ok' | 'down'; detail?: string };

export interface EnginesHealth {
  /** True when every engine answered ok. */
  healthy: boolean;
  engines: { store: EngineReport; bus: EngineReport; queue: EngineReport };
}

/** An engine that does not answer in time is reported down rather than hanging a health check. */
const HEALTH_TIMEOUT_MS = 2000;

async function probe(check: () => Promise<EngineReport>): Promise<EngineReport> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<EngineReport>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'unknown', status: 'down', detail: 'health check timed out' }), HEALTH_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check().catch((err: unknown) => ({ kind: 'unknown', status: 'down' as const, detail: String(err) })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The three engines probed at once, each within 2 s: what every surface's `GET /health` reports
 * (the api's and the registry's), so a load balancer reads the same thing from either.
 */
export async function probeEngines(engines: Pick<Engines, 'store' | 'bus' | 'queue'>): Promise<EnginesHealth> {
  const [store, bus, queue] = await Promise.all([
    probe(() => engines.store.health()),
    probe(() => engines.bus.health()),
    probe(() => engines.queue.health()),
  ]);
  return { healthy: [store, bus, queue].every((e) => e.status === 'ok'), engines: { store, bus, queue } };
}
