import type { AgentStatusView, AgentSummary } from '@agent-platform/contracts';
import type { AgentRecord } from './agent-record.ts';
import type { AgentStatsView } from './agent-stats.ts';

/** An item of GET /agents. `equipped_competencies` is omitted entirely when empty (spec §Resources). */
export function agentSummary(agent: AgentRecord, title: string | null): AgentSummary {
  return {
    id: agent.id,
    name: agent.name,
    title,
    state: agent.state,
    ...equipped(agent),
  };
}

/** GET /agents/{id}. `uptime` counts milliseconds since the last activation; 0 while Suspended. */
export function agentStatus(agent: AgentRecord, stats: AgentStatsView, now: Date): AgentStatusView {
  const since =
    agent.state === 'Running' && agent.running_since !== null ? Date.parse(agent.running_since) : NaN;
  return {
    id: agent.id,
    name: agent.name,
    state: agent.state,
    ...equipped(agent),
    uptime: Number.isNaN(since) ? 0 : Math.max(0, now.getTime() - since),
    ...stats,
  };
}

function equipped(agent: AgentRecord): { equipped_competencies?: string[] } {
  return agent.equipped_competencies.length === 0
    ? {}
    : { equipped_competencies: [...agent.equipped_competencies] };
}
