import type { PackageType } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import { catalogCollections, type CompetencyRecord } from '../catalog/catalog-records.ts';
import type { ScheduleService } from '../schedules/schedule-service.ts';
import { syncAgentJobs, wantedBindings } from './competency-schedules.ts';
import { competencySettings } from './competency-settings.ts';

/**
 * What equipping a competency does besides joining the system prompt (spec §States
 * "Competency": realised onto an agent as a side effect of installing or upgrading the agent
 * package). Each effect is a reconciler: given an agent as it now is, it makes what it owns match
 * the agent's equipped competencies as installed now, so the same call serves install, upgrade,
 * a competency upgrade or uninstall, and putting things back after a failed install.
 *
 * To add an effect (e.g. contract bindings), write an `EquipEffect` and list it where the
 * composition root calls `createEquipEffects`; the catalog needs no change.
 */
export interface EquipEffect {
  /** For logs and error messages. */
  readonly name: string;
  /** Make what this effect keeps for `agent` match its equipped competencies. Idempotent. */
  syncAgent(agent: AgentRecord): Promise<void>;
  /** The agent is gone (uninstalled, or an install that created it was undone): remove what it had. */
  agentRemoved(agentId: string): Promise<void>;
}

/** One package the catalog installed, upgraded or removed. */
export interface TouchedPackage {
  type: PackageType;
  name: string;
  /** The agent's UUID for an agent-template, else the package name. */
  id: string;
}

/** What the catalog calls (libs/domain/src/catalog/catalog-service.ts). */
export interface EquipEffects {
  /**
   * After packages were installed or upgraded, and again after a failed install was undone:
   * every effect, for every agent those packages concern (the agents themselves, and the agents
   * that equip a competency among them). Throws the first failure: the catalog then undoes the
   * install and calls this again to put the effects back.
   */
  afterInstall(packages: readonly TouchedPackage[]): Promise<void>;
  /**
   * After a package was uninstalled. The uninstall cannot be undone any more, so a failing effect
   * is reported through `warn` and left for GET /competencies/schedule-health to show.
   */
  afterUninstall(pkg: TouchedPackage): Promise<void>;
}

export interface EquipEffectsDeps {
  agents: Pick<AgentStore, 'get' | 'list'>;
  warn: (context: Record<string, unknown>, message: string) => void;
}

export function createEquipEffects(deps: EquipEffectsDeps, effects: readonly EquipEffect[]): EquipEffects {
  /** The agents whose equipment `packages` change: by id, so an agent deleted meanwhile is seen as removed. */
  async function concerned(packages: readonly TouchedPackage[]): Promise<string[]> {
    const ids = new Set(packages.filter((p) => p.type === 'agent-template').map((p) => p.id));
    const competencies = new Set(packages.filter((p) => p.type === 'competency').map((p) => p.name));
    if (competencies.size > 0) {
      for (const agent of await deps.agents.list())
        if (agent.equipped_competencies.some((c) => competencies.has(c))) ids.add(agent.id);
    }
    return [...ids];
  }

  async function settle(agentId: string): Promise<void> {
    const agent = await deps.agents.get(agentId);
    for (const effect of effects) {
      if (agent === null) await effect.agentRemoved(agentId);
      else await effect.syncAgent(agent);
    }
  }

  return {
    async afterInstall(packages) {
      for (const id of await concerned(packages)) await settle(id);
    },
    async afterUninstall(pkg) {
      for (const id of await concerned([pkg])) {
        await settle(id).catch((error: unknown) =>
          deps.warn(
            { agent_id: id, package: pkg.name, err: error },
            'an equip effect failed after an uninstall; GET /competencies/schedule-health shows what is left',
          ),
        );
      }
    },
  };
}

/** The competencies `agent` equips that are installed, by id. */
export async function equippedCompetencies(
  store: Store,
  agent: Pick<AgentRecord, 'equipped_competencies'>,
): Promise<Map<string, CompetencyRecord>> {
  const { competencies } = catalogCollections(store);
  const found = new Map<string, CompetencyRecord>();
  for (const id of new Set(agent.equipped_competencies)) {
    const record = await competencies.get(id);
    if (record !== null) found.set(id, record.doc);
  }
  return found;
}

/** Scheduled competencies: one cron job per equipping agent (docs/competencies.md "Schedules"). */
export function scheduleEffect(deps: { store: Store; schedules: ScheduleService }): EquipEffect {
  return {
    name: 'competency schedules',
    async syncAgent(agent) {
      const wanted = wantedBindings(agent, await equippedCompetencies(deps.store, agent));
      await syncAgentJobs(deps.schedules, agent.id, wanted, await deps.schedules.list());
    },
    async agentRemoved(agentId) {
      await syncAgentJobs(deps.schedules, agentId, [], await deps.schedules.list());
    },
  };
}

/** Per-agent settings go with their agent; they are kept while a competency is unequipped, for a re-equip. */
export function settingsEffect(deps: { store: Store }): EquipEffect {
  const settings = competencySettings(deps.store);
  return {
    name: 'competency settings',
    async syncAgent() {},
    async agentRemoved(agentId) {
      for (const { doc } of await settings.find({ where: { agent_id: agentId } }))
        await settings.delete(doc.id);
    },
  };
}

/** The effects the platform ships, in the order they run. */
export function competencyEquipEffects(deps: { store: Store; schedules: ScheduleService }): EquipEffect[] {
  return [scheduleEffect(deps), settingsEffect(deps)];
}
