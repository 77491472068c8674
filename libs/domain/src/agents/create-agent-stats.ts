import type { Counters, Store } from '@agent-platform/store';
import type { AgentStats, AgentStatsView, SourceName } from './agent-stats.ts';

/**
 * Counter keys (store counters are atomic across processes, so every worker adds to the same
 * numbers):
 * - `agent:<id>:received`: invocations accepted for the agent (tasks_received);
 * - `agent:<id>:src:<source>:count`: invocations from `source` that finished, ok or not;
 * - `agent:<id>:src:<source>:errors`: those that finished with an error;
 * - `agent:<id>:src:<source>:duration_ms`: their summed duration.
 * The source is URI-encoded so that a `:` in it cannot break the key apart.
 */
export const agentStatKeys = {
  prefix: (agentId: string) => `agent:${agentId}:`,
  received: (agentId: string) => `agent:${agentId}:received`,
  sourcePrefix: (agentId: string) => `agent:${agentId}:src:`,
  source: (agentId: string, source: SourceName, field: 'count' | 'errors' | 'duration_ms') =>
    `agent:${agentId}:src:${encodeURIComponent(source)}:${field}`,
};

interface SourceTotals {
  count: number;
  errors: number;
  duration_ms: number;
}

/**
 * Per-agent invocation counters over `store.counters`. `avg_duration_ms` is the floor of the
 * summed duration over the finished count (0 before any); `tasks_completed` counts the finished
 * invocations that succeeded. `by_source` rows are `[source, count, error_count, avg_duration_ms]`
 * sorted by source name (docs/agents.md).
 */
export function createAgentStats(store: Store): AgentStats {
  const counters = store.counters;
  return {
    async received(agentId) {
      await counters.add(agentStatKeys.received(agentId), 1);
    },
    async finished(agentId, source, outcome) {
      // One batch: one commit for the three numbers of a finished invocation.
      await counters.addMany([
        { key: agentStatKeys.source(agentId, source, 'count'), delta: 1 },
        { key: agentStatKeys.source(agentId, source, 'errors'), delta: outcome.ok ? 0 : 1 },
        {
          key: agentStatKeys.source(agentId, source, 'duration_ms'),
          delta: Math.max(0, Math.round(outcome.duration_ms)),
        },
      ]);
    },
    async read(agentId) {
      const [received, rows] = await Promise.all([
        counters.get(agentStatKeys.received(agentId)),
        counters.list(agentStatKeys.sourcePrefix(agentId)),
      ]);
      return view(received, bySource(rows, agentStatKeys.sourcePrefix(agentId)));
    },
  };
}

/**
 * Brings every counter of an agent back to zero (uninstall). Counters cannot be deleted through
 * the port; zeroed rows read exactly like absent ones.
 */
export async function clearAgentStats(counters: Counters, agentId: string): Promise<void> {
  const rows = Object.entries(await counters.list(agentStatKeys.prefix(agentId)));
  await counters.addMany(rows.map(([key, value]) => ({ key, delta: -value })));
}

function bySource(rows: Record<string, number>, prefix: string): Map<string, SourceTotals> {
  const totals = new Map<string, SourceTotals>();
  for (const [key, value] of Object.entries(rows)) {
    const rest = key.slice(prefix.length);
    const cut = rest.lastIndexOf(':');
    const source = decodeURIComponent(rest.slice(0, cut));
    const field = rest.slice(cut + 1);
    if (field !== 'count' && field !== 'errors' && field !== 'duration_ms') continue;
    const entry = totals.get(source) ?? { count: 0, errors: 0, duration_ms: 0 };
    entry[field] = value;
    totals.set(source, entry);
  }
  return totals;
}

function view(received: number, totals: Map<string, SourceTotals>): AgentStatsView {
  const sources = [...totals.entries()]
    .filter(([, t]) => t.count > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const sum = { count: 0, errors: 0, duration_ms: 0 };
  for (const [, t] of sources) {
    sum.count += t.count;
    sum.errors += t.errors;
    sum.duration_ms += t.duration_ms;
  }
  return {
    tasks_received: received,
    tasks_completed: sum.count - sum.errors,
    invocation_metrics: {
      total_count: sum.count,
      error_count: sum.errors,
      avg_duration_ms: average(sum.duration_ms, sum.count),
      by_source: sources.map(([source, t]) => [source, t.count, t.errors, average(t.duration_ms, t.count)]),
    },
  };
}

function average(total: number, count: number): number {
  return count === 0 ? 0 : Math.floor(total / count);
}
