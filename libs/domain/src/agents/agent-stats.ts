/** Invocation source name as counted in `by_source` rows: `Api`, `Channel`, `Cron`, `Workflow`, `Chat`. */
export type SourceName = string;

/** The counters behind GET /agents/{id} (spec §Resources "Agent status"). */
export interface AgentStatsView {
  tasks_received: number;
  tasks_completed: number;
  invocation_metrics: {
    total_count: number;
    error_count: number;
    avg_duration_ms: number;
    /**
     * `[source, count, error_count, avg_duration_ms]` per source (docs/agents.md says what the
     * three integers mean; the spec leaves it open).
     */
    by_source: Array<[string, number, number, number]>;
  };
}

/** Per-agent invocation counters, kept in the store's atomic counters (shared by every node). */
export interface AgentStats {
  received(agentId: string, source: SourceName): Promise<void>;
  finished(agentId: string, source: SourceName, outcome: { ok: boolean; duration_ms: number }): Promise<void>;
  read(agentId: string): Promise<AgentStatsView>;
}
