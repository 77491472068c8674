/** Agent states (spec §States "Agent"): no Created or Terminated state exists. */
export type AgentState = 'Running' | 'Suspended';

/**
 * An agent as stored (collection `agents`). Created only by installing an agent-template package
 * (spec "Rules of the model" 1); an upgrade of the package updates it in place (same id; memory,
 * sessions and schedules kept).
 */
export interface AgentRecord {
  id: string;
  /** The package name (DECISIONS D4); unique. */
  name: string;
  /** Installed package version this agent was last built from. */
  version: string;
  state: AgentState;
  description: string;
  /** The AGENT.md body; the system prompt is this followed by the equipped competencies' prompts. */
  prompt: string;
  /** Competency package names in equip order (AGENT.md `competencies`). */
  equipped_competencies: string[];
  allow_skill_tools: string[];
  allow_integration_tools: string[];
  /** Set by PUT /agents/{id}/model; recorded only: the spec says no routing change occurs. */
  model_preference: { model_id: string; provider: string } | null;
  created_at: string;
  updated_at: string;
  /** When the agent last became Running (uptime); null while Suspended. */
  running_since: string | null;
}

export const AGENTS_COLLECTION = 'agents';
