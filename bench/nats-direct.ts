import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { connectNatsBus } from '@agent-platform/bus/nats';
import { Subjects, type AgentInvokeReply, type AgentInvokeRequest } from '@agent-platform/contracts';
import { selfTimedResult } from './latency.ts';
import { BENCH_MESSAGE } from './platform-setup.ts';
import type { LoadResult, LoadSettings } from './target.ts';

/** As long as the api waits for a worker at the default `[agents] invocation_timeout_secs`. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * What an api node does for `POST /agents/{id}/send` once HTTP, auth and the agent check are
 * done: `agents.invoke` through the platform's own NATS adapter, the same payload (source `Api`,
 * a fresh correlation id, no idempotency key), `connections` callers each waiting for its reply
 * before the next, for `durationSecs`. Timed with the same percentiles as autocannon's runs.
 */
export async function measureDirectNats(natsUrl: string, agentId: string, settings: LoadSettings): Promise<LoadResult> {
  const bus = await connectNatsBus({ servers: natsUrl, name: 'bench-direct' });
  const latencies: number[] = [];
  let errors = 0;
  let timeouts = 0;
  const started = performance.now();
  const endAt = started + settings.durationSecs * 1000;
  const caller = async (): Promise<void> => {
    while (performance.now() < endAt) {
      const sent = performance.now();
      try {
        await bus.request<AgentInvokeRequest, AgentInvokeReply>(
          Subjects.agentInvoke,
          { agent_id: agentId, source: 'Api', message: BENCH_MESSAGE, correlation_id: randomUUID() },
          { timeoutMs: REQUEST_TIMEOUT_MS },
        );
        latencies.push(performance.now() - sent);
      } catch (error) {
        if ((error as { code?: string }).code === 'timeout') timeouts++;
        else errors++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: settings.connections * settings.pipelining }, caller));
  } finally {
    await bus.close();
  }
  const elapsedSecs = (performance.now() - started) / 1000;
  return selfTimedResult(latencies, elapsedSecs, { errors, timeouts, non2xx: 0 });
}
