import { DEFAULT_PROMPT_TEMPLATE, type Trigger, type TriggerCreateBody, type TriggerFireView } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import { checkTriggerPattern } from './trigger-pattern.ts';
import { createTriggerStore, fireView, type TriggerStore } from './trigger-store.ts';

/** The trigger routes' side (spec §Triggers): create, list, delete, and the fire log (ours). */
export interface TriggerService {
  /** `NotFound` for an unknown agent; `ValidationError` naming a bad pattern key or filter. */
  create(agentId: string, body: TriggerCreateBody): Promise<Trigger>;
  /** Every trigger, oldest first. */
  list(): Promise<Trigger[]>;
  /** `NotFound` for an unknown agent. */
  listForAgent(agentId: string): Promise<Trigger[]>;
  /** `NotFound` for an unknown trigger. */
  delete(id: string): Promise<void>;
  /** `NotFound` for an unknown trigger. Newest first. */
  fires(id: string, limit: number): Promise<TriggerFireView[]>;
  /** The store underneath, for the matcher and the catalog (uninstall removes an agent's triggers). */
  readonly store: TriggerStore;
}

export interface TriggerServiceDeps {
  store: Store;
  clock: Clock;
  agents: Pick<AgentStore, 'get'>;
}

export function createTriggerService(deps: TriggerServiceDeps): TriggerService {
  const triggers = createTriggerStore(deps.store, deps.clock);
  const requireAgent = async (agentId: string): Promise<void> => {
    if ((await deps.agents.get(agentId)) === null) throw Errors.notFound('agent', agentId);
  };
  const requireTrigger = async (id: string): Promise<void> => {
    if ((await triggers.get(id)) === null) throw Errors.notFound('trigger', id);
  };
  return {
    store: triggers,
    async create(agentId, body) {
      await requireAgent(agentId);
      checkTriggerPattern(body.pattern);
      return triggers.insert({
        agent_id: agentId,
        pattern: body.pattern,
        prompt_template: body.prompt_template ?? DEFAULT_PROMPT_TEMPLATE,
        max_fires: body.max_fires ?? 0,
      });
    },
    list: () => triggers.list(),
    async listForAgent(agentId) {
      await requireAgent(agentId);
      return triggers.list(agentId);
    },
    async delete(id) {
      if (!(await triggers.delete(id))) throw Errors.notFound('trigger', id);
    },
    async fires(id, limit) {
      await requireTrigger(id);
      return (await triggers.fires(id, limit)).map(fireView);
    },
  };
}
