import { Subjects, type AgentAbortMessage } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import type { Store } from '@agent-platform/store';
import { catalogCollections } from '../catalog/catalog-records.ts';
import { refuseRevokedActivation } from '../revocations/revocation-guard.ts';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { activationError, activationProblems } from './activation-check.ts';
import type { AgentRecord } from './agent-record.ts';
import type { AgentStore } from './agent-store.ts';

/** The agent state machine of spec §States "Agent": Suspended <-> Running, nothing else. */
export interface AgentLifecycle {
  /**
   * Suspended -> Running, after the contract check (run fresh on every attempt). `NotFound`,
   * `InvalidState` when already Running, `ActivationError` naming what is missing or the revoked
   * packages behind the agent (docs/catalog.md "Revocations").
   */
  activate(id: string): Promise<AgentRecord>;
  /**
   * Running -> Suspended, ungated; then tells every worker to abort the agent's in-flight work.
   * Session, memory and schedules are kept. `InvalidState` when already Suspended.
   */
  suspend(id: string): Promise<AgentRecord>;
  /** The contract check alone, against what is installed now; throws `ActivationError`. */
  check(agent: AgentRecord): Promise<void>;
}

export interface AgentLifecycleDeps {
  store: Store;
  agents: AgentStore;
  bus: Bus;
  clock: Clock;
  /** Where `agent.activated` and `agent.suspended` go (docs/events.md). */
  events?: EventPublisher;
}

export function createAgentLifecycle(deps: AgentLifecycleDeps): AgentLifecycle {
  const records = catalogCollections(deps.store);

  async function check(agent: AgentRecord): Promise<void> {
    // docs/catalog.md "Revocations": nothing revoked without an override behind the agent. First:
    // a security refusal is named even when contracts are missing too.
    await refuseRevokedActivation(deps.store, agent);
    const competencies = new Map<string, string[]>();
    for (const name of agent.equipped_competencies) {
      const found = await records.competencies.get(name);
      if (found !== null) competencies.set(name, found.doc.contracts);
    }
    const implemented = new Set(
      (await records.integrations.find()).flatMap(({ doc }) => Object.keys(doc.implements)),
    );
    const error = activationError(
      agent,
      activationProblems(agent.equipped_competencies, (n) => competencies.get(n), implemented),
    );
    if (error !== null) throw error;
  }

  return {
    check,
    async activate(id) {
      const agent = await deps.agents.get(id);
      if (agent === null) throw Errors.notFound('agent', id);
      refuseSame(agent, 'Running');
      await check(agent);
      const activated = await deps.agents.update(id, (current) => {
        refuseSame(current, 'Running');
        const now = deps.clock.now().toISOString();
        return { ...current, state: 'Running', running_since: now, updated_at: now };
      });
      await deps.events?.emit('agent.activated', { agent_id: id, data: { name: activated.name, state: activated.state } });
      return activated;
    },
    async suspend(id) {
      const suspended = await deps.agents.update(id, (current) => {
        refuseSame(current, 'Suspended');
        return {
          ...current,
          state: 'Suspended',
          running_since: null,
          updated_at: deps.clock.now().toISOString(),
        };
      });
      // After the state change: a worker that sees the notice and re-reads the agent finds it
      // Suspended, so it neither keeps the aborted work nor picks up new work for it (D9).
      await deps.bus.notify<AgentAbortMessage>(Subjects.agentAbort, { agent_id: id, reason: 'suspended' });
      await deps.events?.emit('agent.suspended', { agent_id: id, data: { name: suspended.name, state: suspended.state } });
      return suspended;
    },
  };
}

/** Spec §States "Agent": the error names the current state and the valid command. */
function refuseSame(agent: AgentRecord, target: AgentRecord['state']): void {
  if (agent.state !== target) return;
  const command = target === 'Running' ? 'suspend' : 'activate';
  throw Errors.invalidState(`agent ${agent.name} is already ${target}; use ${command}`, {
    agent_id: agent.id,
    state: agent.state,
    valid_command: command,
  });
}

/**
 * DECISIONS D9: a Suspended agent does no work. Send, invoke, a cron fire and a workflow step
 * call this before running the agent.
 */
export function assertAgentRunning(agent: AgentRecord): void {
  if (agent.state === 'Running') return;
  throw Errors.invalidState(`agent ${agent.name} is ${agent.state}; activate it first`, {
    agent_id: agent.id,
    state: agent.state,
    valid_command: 'activate',
  });
}
