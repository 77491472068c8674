import type { ListAgentsInput, SendMessageInput } from '@agent-platform/contracts';
import { assertAgentRunning, Errors, type AgentRecord } from '@agent-platform/domain';
import type { ApiDeps } from '../../deps.ts';
import { toAgentResponse } from '../../invocation/invocation-views.ts';
import { agentSummaries } from '../../routes/agent-routes.ts';
import { UUID, type ToolHandler } from '../tool-context.ts';

/** list_agents: GET /agents, optionally only the agents in one state. */
export const listAgents: ToolHandler<ListAgentsInput> = async ({ deps }, { state }) => {
  const agents = await agentSummaries(deps);
  return { agents: state === undefined ? agents : agents.filter((agent) => agent.state === state) };
};

/**
 * send_message: POST /agents/{id}/send with the agent named by id or name. The same checks in the
 * same order (message size, then the agent exists and is Running), then the invocation goes to an
 * agent worker over the bus, with the source `Api` (MCP is mounted on the api surface).
 */
export const sendMessage: ToolHandler<SendMessageInput> = async (
  { deps, caller, requestId, signal, invoker },
  { agent: ref, message },
  note,
) => {
  invoker.checkMessage(message);
  const agent = await agentByIdOrName(deps, ref);
  note.target = `/agents/${agent.id}/send`;
  note.metadata.agent_id = agent.id;
  assertAgentRunning(agent);
  const { result } = await invoker.invoke(
    { agent_id: agent.id, source: 'Api', message, correlation_id: requestId, caller: caller.identity },
    { signal },
  );
  return { agent_id: agent.id, agent_name: agent.name, ...toAgentResponse(result) };
};

async function agentByIdOrName(deps: Pick<ApiDeps, 'agents'>, ref: string): Promise<AgentRecord> {
  const agent = UUID.test(ref) ? await deps.agents.get(ref.toLowerCase()) : await deps.agents.getByName(ref);
  if (agent === null) throw Errors.notFound('agent', ref);
  return agent;
}
