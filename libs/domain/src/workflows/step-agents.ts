import type { StepAgent, WorkflowStep } from '@agent-platform/contracts';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import type { WorkflowRunRecord } from './run-record.ts';

/** The agent a step names, looked up now (an agent may be installed, renamed or removed meanwhile). */
export async function stepAgent(agents: Pick<AgentStore, 'get' | 'getByName'>, agent: StepAgent): Promise<AgentRecord | null> {
  return 'ById' in agent ? agents.get(agent.ById) : agents.getByName(agent.ByName);
}

/** How a step names its agent when no record is found. */
export function agentLabel(agent: StepAgent): string {
  return 'ById' in agent ? agent.ById : agent.ByName;
}

/**
 * The agents of the run's Collect steps, looked up once, for their step results: a Collect step
 * names an agent but does not call it (D8). An agent that does not exist shows by its name, with
 * an empty id.
 */
export async function collectAgentOf(
  agents: Pick<AgentStore, 'get' | 'getByName'>,
  run: Pick<WorkflowRunRecord, 'definition'>,
): Promise<(step: WorkflowStep) => { agent_id: string; agent_name: string }> {
  // By step name (unique in a definition): callers pass steps of their own copy of the run.
  const found = new Map<string, AgentRecord | null>();
  for (const step of run.definition.steps) if (step.mode === 'Collect') found.set(step.name, await stepAgent(agents, step.agent));
  return (step) => {
    const agent = found.get(step.name) ?? null;
    return agent === null ? { agent_id: 'ById' in step.agent ? step.agent.ById : '', agent_name: agentLabel(step.agent) } : { agent_id: agent.id, agent_name: agent.name };
  };
}
