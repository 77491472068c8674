import type {
  CompetencyDetail,
  CompetencyInfo,
  CompetencySettingsView,
  DependencyReport,
  ScheduleDrift,
} from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import { catalogCollections, type CompetencyRecord } from '../catalog/catalog-records.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import { Errors } from '../errors/errors.ts';
import type { ScheduleService } from '../schedules/schedule-service.ts';
import type { Clock } from '../time/clock.ts';
import { bindingDrift, actualView, jobOwner, resetBinding, wantedBindings } from './competency-schedules.ts';
import {
  applySettingsInput,
  competencySettings,
  effectiveSettings,
  settingsId,
} from './competency-settings.ts';
import { competencyDetail, competencyInfo, dependencyReport, skillStates } from './competency-views.ts';
import { reorderedCompetencies } from './equip-order.ts';
import type { SkillInstalled } from './skill-installed.ts';

/** Spec §Endpoints "Competencies" (docs/competencies.md). Competencies themselves come from the catalog. */
export interface CompetencyService {
  /** Every installed competency, sorted by id. */
  list(): Promise<CompetencyInfo[]>;
  /** 404 when not installed. */
  get(id: string): Promise<CompetencyDetail>;
  deps(id: string): Promise<DependencyReport>;
  /** POST /competencies/install: a competency package (and its dependencies); anything else is 400, nothing installed. */
  install(path: string): Promise<{ id: string }>;
  /** The agent's competency ids in equip order; 404 for an unknown agent. */
  agentCompetencies(agentId: string): Promise<string[]>;
  /** `order` must be a permutation of the equipped ids, else 400 naming what differs. */
  reorder(agentId: string, order: readonly string[]): Promise<void>;
  settings(agentId: string, competencyId: string): Promise<CompetencySettingsView>;
  /** Validated against the competency's `settings` (400 naming key and reason, nothing stored). */
  updateSettings(
    agentId: string,
    competencyId: string,
    input: Readonly<Record<string, unknown>>,
  ): Promise<void>;
  /** GET /competencies/schedule-health `drift`. */
  scheduleHealth(): Promise<ScheduleDrift[]>;
  /** Restores the agent's cron binding of the competency to its manifest. */
  resetSchedule(agentId: string, competencyId: string): Promise<void>;
}

export interface CompetencyServiceDeps {
  store: Store;
  agents: AgentStore;
  catalog: Pick<CatalogService, 'install'>;
  schedules: ScheduleService;
  clock: Clock;
  skillInstalled: SkillInstalled;
}

export function createCompetencyService(deps: CompetencyServiceDeps): CompetencyService {
  const { competencies } = catalogCollections(deps.store);
  const settings = competencySettings(deps.store);

  async function competencyOr404(id: string): Promise<CompetencyRecord> {
    const found = await competencies.get(id);
    if (found === null) throw Errors.notFound('competency', id);
    return found.doc;
  }

  async function agentOr404(id: string): Promise<AgentRecord> {
    const agent = await deps.agents.get(id);
    if (agent === null) throw Errors.notFound('agent', id);
    return agent;
  }

  /** The agent and the competency it equips; 404 naming which is missing. */
  async function equipped(agentId: string, competencyId: string): Promise<[AgentRecord, CompetencyRecord]> {
    const agent = await agentOr404(agentId);
    if (!agent.equipped_competencies.includes(competencyId)) throw Errors.notEquipped(agent, competencyId);
    return [agent, await competencyOr404(competencyId)];
  }

  async function equippedSomewhere(): Promise<Set<string>> {
    return new Set((await deps.agents.list()).flatMap((agent) => agent.equipped_competencies));
  }

  return {
    async list() {
      const [rows, inUse] = await Promise.all([
        competencies.find({ orderBy: { field: 'id' } }),
        equippedSomewhere(),
      ]);
      return Promise.all(
        rows.map(async ({ doc }) =>
          competencyInfo(doc, await skillStates(doc, deps.skillInstalled), inUse.has(doc.id)),
        ),
      );
    },

    async get(id) {
      const record = await competencyOr404(id);
      return competencyDetail(
        record,
        await skillStates(record, deps.skillInstalled),
        (await equippedSomewhere()).has(id),
      );
    },

    async deps(id) {
      const record = await competencyOr404(id);
      return dependencyReport(record, await skillStates(record, deps.skillInstalled));
    },

    async install(path) {
      const items = await deps.catalog.install({ path, type: 'competency' });
      const root = items[items.length - 1];
      if (root === undefined) throw Errors.internal('the catalog installed nothing');
      return { id: root.id };
    },

    async agentCompetencies(agentId) {
      return [...(await agentOr404(agentId)).equipped_competencies];
    },

    async reorder(agentId, order) {
      await agentOr404(agentId);
      const now = deps.clock.now().toISOString();
      await deps.agents.update(agentId, (current) => ({
        ...current,
        equipped_competencies: reorderedCompetencies(current, order),
        updated_at: now,
      }));
    },

    async settings(agentId, competencyId) {
      const [, competency] = await equipped(agentId, competencyId);
      const stored = (await settings.get(settingsId(agentId, competencyId)))?.doc.values ?? {};
      return {
        agent_id: agentId,
        competency_id: competencyId,
        values: effectiveSettings(competency.settings, stored),
        schema: competency.settings,
      };
    },

    async updateSettings(agentId, competencyId, input) {
      const [, competency] = await equipped(agentId, competencyId);
      const id = settingsId(agentId, competencyId);
      const now = deps.clock.now().toISOString();
      // Validated inside the atomic update against the values as stored, so concurrent PUTs of
      // different keys both land; a refusal throws before anything is written.
      await settings.update(id, (current) => ({
        id,
        agent_id: agentId,
        competency_id: competencyId,
        values: applySettingsInput(competency.settings, current?.doc.values ?? {}, input, competencyId),
        updated_at: now,
      }));
    },

    async scheduleHealth() {
      const [agents, rows, jobs] = await Promise.all([
        deps.agents.list(),
        competencies.find(),
        deps.schedules.list(),
      ]);
      const installed = new Map(rows.map(({ doc }) => [doc.id, doc]));
      const owned = new Map<string, typeof jobs>();
      for (const job of jobs) {
        const owner = jobOwner(job);
        if (owner === null) continue;
        const key = `${job.agent_id}/${owner}`;
        owned.set(key, [...(owned.get(key) ?? []), job]);
      }
      const drift: ScheduleDrift[] = [];
      for (const agent of agents) {
        for (const wanted of wantedBindings(agent, installed)) {
          const key = `${agent.id}/${wanted.competency_id}`;
          drift.push(...bindingDrift(wanted, owned.get(key) ?? []));
          owned.delete(key);
        }
      }
      // What is left is owned by a competency the agent no longer equips, or by an agent that is gone.
      for (const group of owned.values()) {
        for (const job of group) {
          drift.push({
            agent_id: job.agent_id,
            competency_id: jobOwner(job) ?? '',
            problem: 'extra',
            expected: null,
            actual: actualView(job),
          });
        }
      }
      return drift;
    },

    async resetSchedule(agentId, competencyId) {
      const [agent, competency] = await equipped(agentId, competencyId);
      const wanted = wantedBindings(
        { id: agent.id, equipped_competencies: [competencyId] },
        new Map([[competencyId, competency]]),
      );
      await resetBinding(
        deps.schedules,
        agentId,
        competencyId,
        wanted[0] ?? null,
        await deps.schedules.list(),
      );
    },
  };
}
