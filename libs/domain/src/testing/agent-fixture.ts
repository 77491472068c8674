import { randomUUID } from 'node:crypto';
import type { AgentRecord } from '../agents/agent-record.ts';

/**
 * An agent record as an install would leave it, for tests that need an agent without installing a
 * package: a fresh id and name, Running unless `state` says otherwise, created at `at` (default now).
 */
export function agentFixture(overrides: Partial<AgentRecord> = {}, at: string = new Date().toISOString()): AgentRecord {
  const state = overrides.state ?? 'Running';
  return {
    id: randomUUID(),
    name: `agent-${randomUUID().slice(0, 8)}`,
    version: '1.0.0',
    state,
    description: 'A test agent.',
    prompt: 'You are a test agent.',
    equipped_competencies: [],
    allow_skill_tools: [],
    allow_integration_tools: [],
    model_preference: null,
    created_at: at,
    updated_at: at,
    running_since: state === 'Running' ? at : null,
    ...overrides,
  };
}
