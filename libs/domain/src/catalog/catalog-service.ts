import { randomUUID } from 'node:crypto';
import type { InstalledItem, InstalledPackage, PackageType, RegistrySearchQuery, RegistrySearchResult, TemplateSummary } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { createTriggerStore } from '../events/trigger-store.ts';
import type { SessionStore } from '../agents/session-store.ts';
import { clearAgentStats } from '../agents/create-agent-stats.ts';
import type { EquipEffects } from '../competencies/equip-effects.ts';
import { Errors } from '../errors/errors.ts';
import type { MemoryStore } from '../memory/memory-store.ts';
import type { Clock } from '../time/clock.ts';
import { checkPlannedSkills, type SkillCheckDeps } from '../skills/skill-install-check.ts';
import { DEFAULT_STARLARK_LIMITS } from '../skills/starlark-runner.ts';
import { integrationStateCollections } from '../integrations/integration-state.ts';
import { liveConsumers } from '../integrations/live-consumers.ts';
import { unbindIntegration } from '../tools/contract-bindings.ts';
import { drainAdmission } from '../workflows/workflow-admissions.ts';
import { refuseRevokedInstall } from '../revocations/revocation-guard.ts';
import { revocationStatus } from '../revocations/revocation-records.ts';
import { applyPlan } from './apply-install.ts';
import { catalogCollections, type InstalledPackageRecord } from './catalog-records.ts';
import { planInstall, type PlannedPackage } from './install-plan.ts';
import { requestKind, type InstallRequest } from './install-request.ts';
import { checkPlannedActivation } from './planned-activation.ts';
import type { PackageSource } from './package-source.ts';
import { planRegistryInstall, requireRegistry, type CatalogRegistryDeps } from './registry-install.ts';

export type { InstallRequest } from './install-request.ts';

/** Installs and removes packages (docs/catalog.md). */
export interface CatalogService {
  /**
   * Installs the package and, first, its dependencies. All or nothing: every package is read and
   * checked before anything is written, and a failed write undoes the earlier ones.
   */
  install(request: InstallRequest): Promise<InstalledItem[]>;
  /** Sorted by name. */
  installed(): Promise<InstalledPackage[]>;
  /** The full record, or null. */
  get(name: string): Promise<InstalledPackageRecord | null>;
  /**
   * `NotFound` when not installed; `Conflict` while its agent is Running or while another
   * installed package depends on it. Removes the entity; an agent's memory, sessions and
   * counters go with it.
   */
  uninstall(name: string): Promise<void>;
  templates(): Promise<TemplateSummary[]>;
  /** `GET /catalog/search`: the registry's answer, as it gave it. */
  search(query: RegistrySearchQuery): Promise<RegistrySearchResult>;
}

export interface CatalogServiceDeps {
  store: Store;
  agents: AgentStore;
  sessions: SessionStore;
  memory: MemoryStore;
  clock: Clock;
  source: PackageSource;
  /** Install checks of skills (docs/skills.md); absent = no Starlark interpreter. */
  skills?: SkillCheckDeps;
  /**
   * What equipping does besides the prompt (competency schedules, settings; docs/competencies.md),
   * run after every install, upgrade and uninstall. Absent: none (catalog unit tests).
   */
  effects?: EquipEffects;
  /** Where `agent.installed`, `agent.upgraded`, `agent.activated` and `agent.uninstalled` go (docs/events.md). */
  events?: EventPublisher;
  /** Install by name and search (`[catalog] registry_url`); absent = no registry. */
  registry?: CatalogRegistryDeps;
}

export function createCatalogService(deps: CatalogServiceDeps): CatalogService {
  const records = catalogCollections(deps.store);
  const get = async (name: string) => (await records.packages.get(name))?.doc ?? null;

  async function removeEntity(record: InstalledPackageRecord): Promise<void> {
    switch (record.type) {
      case 'agent-template': {
        const agent = await deps.agents.getByName(record.name);
        if (agent === null) return;
        await deps.agents.delete(agent.id, (current) => {
          if (current.state === 'Running')
            throw Errors.conflict(
              `agent ${current.name} is Running; suspend it before uninstalling its package`,
              {
                agent_id: current.id,
                state: current.state,
              },
            );
        });
        await deps.memory.deleteAll(agent.id);
        await deps.sessions.deleteAll(agent.id);
        await clearAgentStats(deps.store.counters, agent.id);
        // docs/events.md "Triggers": an agent's triggers go with it.
        await createTriggerStore(deps.store, deps.clock).deleteForAgent(agent.id);
        await deps.events?.emit('agent.uninstalled', { agent_id: agent.id, data: { name: agent.name, version: record.version } });
        return;
      }
      case 'workflow-template': {
        // A tombstone, not a delete: runs in flight finish, and the drain shows (docs/workflows.md).
        const now = deps.clock.now().toISOString();
        const workflow = await records.workflows.update(record.entity_id, (current) =>
          current === null ? null : { ...current.doc, uninstalled_at: now, updated_at: now },
        );
        if (workflow !== null) await drainAdmission(deps.store, workflow.doc.id, workflow.doc.version, now);
        return;
      }
      case 'competency':
        await records.competencies.delete(record.name);
        return;
      case 'skill':
        await records.skills.delete(record.name);
        return;
      case 'integration': {
        // The same refusal as DELETE /integrations/{id} (docs/integrations.md "Refusals"); the
        // hosts close its servers at their next reconcile, and a reinstall starts Installed.
        const consumers = await liveConsumers(deps.store, record.name);
        if (consumers.length > 0) throw Errors.integrationInUse(record.name, 'uninstall', consumers);
        await records.integrations.delete(record.name);
        await integrationStateCollections(deps.store).desired.delete(record.name);
        // Its contracts are bound again at the next equip, to another implementer if there is one.
        await unbindIntegration(deps.store, record.name);
        return;
      }
      case 'contract':
        await records.contracts.delete(record.name);
        return;
    }
  }

  /** The agent events of one install, after it committed (never for an install that was undone). */
  async function emitInstalled(items: readonly InstalledItem[], before: ReadonlyMap<string, { agent: AgentRecord | null; version: string | null }>): Promise<void> {
    const events = deps.events;
    if (events === undefined) return;
    for (const item of items) {
      if (item.type !== 'agent-template') continue;
      const agent = await deps.agents.get(item.id);
      if (agent === null) continue;
      const previous = before.get(item.name)?.agent ?? null;
      const base = { name: agent.name, version: item.version, state: agent.state };
      if (item.status === 'installed') await events.emit('agent.installed', { agent_id: agent.id, data: base });
      if (item.status === 'upgraded') {
        await events.emit('agent.upgraded', { agent_id: agent.id, data: { ...base, previous_version: before.get(item.name)?.version ?? null } });
      }
      if (previous !== null && previous.state !== 'Running' && agent.state === 'Running') {
        await events.emit('agent.activated', { agent_id: agent.id, data: { name: agent.name, state: agent.state } });
      }
    }
  }

  async function planRequest(request: InstallRequest): Promise<PlannedPackage[]> {
    const what = requestKind(request);
    if (what.kind === 'path') {
      const plan = await planInstall(what.path, { source: deps.source, installed: get });
      if (request.type !== undefined) expectType(plan[plan.length - 1]?.pkg.manifest.package, request.type, what.path);
      return plan;
    }
    const installedAll = async () => (await records.packages.find()).map(({ doc }) => doc);
    return planRegistryInstall(what.request, { registry: deps.registry, installed: get, installedAll });
  }

  return {
    async install(request) {
      const plan = await planRequest(request);
      if (request.integrationsFromPath !== true) refuseIntegrationsFromPath(plan);
      await checkPlannedSkills(plan, deps.skills ?? NO_INTERPRETER);
      const activate = request.activate === true;
      // docs/catalog.md "Revocations": a revoked name@version, from a path or the registry alike.
      await refuseRevokedInstall(deps.store, deps.agents, plan, activate);
      if (activate) await checkPlannedActivation(plan, records, deps.agents);
      const effects = deps.effects;
      const agentSteps = plan.filter((step) => step.pkg.manifest.package.type === 'agent-template');
      const before = new Map(await Promise.all(agentSteps.map(async (step) => [step.name, { agent: await deps.agents.getByName(step.name), version: step.previous?.version ?? null }] as const)));
      const items = await applyPlan(
        plan,
        { store: deps.store, records, agents: deps.agents, clock: deps.clock, newId: randomUUID },
        activate,
        // Inside the all-or-nothing: a failing effect undoes the install, then the effects are
        // run again so that what they made matches the catalog as it was put back.
        effects === undefined
          ? undefined
          : {
              after: (items) => effects.afterInstall(items),
              undone: (items) => effects.afterInstall(items).catch(() => undefined),
            },
      );
      await emitInstalled(items, before);
      return items;
    },
    async installed() {
      const rows = await records.packages.find({ orderBy: { field: 'name' } });
      const revocation = await revocationStatus(deps.store);
      return rows.map(({ doc }) => ({
        name: doc.name,
        type: doc.type,
        version: doc.version,
        title: doc.title,
        installed_at: doc.installed_at,
        source: doc.source ?? 'path',
        ...revocation(doc.name, doc.version),
      }));
    },
    get,
    async uninstall(name) {
      const record = await get(name);
      if (record === null) throw Errors.notFound('package', name);
      const dependents = (await records.packages.find())
        .map(({ doc }) => doc)
        .filter((doc) => doc.dependencies.includes(name))
        .map((doc) => doc.name)
        .sort();
      if (dependents.length > 0)
        throw Errors.conflict(
          `package ${name} is needed by ${dependents.join(', ')}; uninstall those first`,
          { name, dependents },
        );
      // The entity goes first: if that fails (a Running agent), the package stays installed and
      // the uninstall can simply be retried.
      await removeEntity(record);
      await records.packages.delete(name);
      await deps.effects?.afterUninstall({ type: record.type, name: record.name, id: record.entity_id });
    },
    async templates() {
      const rows = await records.packages.find({
        where: { type: 'agent-template' },
        orderBy: { field: 'name' },
      });
      return rows.map(({ doc }) => templateSummary(doc));
    },
    search(query) {
      return requireRegistry(deps.registry, 'searching').source.search(query);
    },
  };
}

/** docs/integrations.md "Who may install": an integration from a directory is the IntegrationInstall action's (admin). */
function refuseIntegrationsFromPath(plan: readonly PlannedPackage[]): void {
  const names = plan
    .filter((s) => s.origin === 'path' && s.action !== 'unchanged' && s.pkg.manifest.package.type === 'integration')
    .map((s) => s.name);
  if (names.length > 0)
    throw Errors.permissionDenied(
      `installing the integration package(s) ${names.join(', ')} from a directory needs IntegrationInstall (admin): an integration names a program the platform runs; nothing was installed`,
      { integrations: names },
    );
}

const NO_INTERPRETER: SkillCheckDeps = {
  starlark: null,
  limits: () => DEFAULT_STARLARK_LIMITS,
};

function expectType(
  root: { type: PackageType; name: string } | undefined,
  type: PackageType,
  path: string,
): void {
  if (root === undefined || root.type === type) return;
  throw Errors.validation(
    `the package at ${path} is a ${root.type} package (${root.name}); this route installs ${type} packages only (POST /catalog/install takes any type)`,
    { path, expected_type: type, package_type: root.type, name: root.name },
  );
}

function templateSummary(doc: InstalledPackageRecord): TemplateSummary {
  const payload = doc.payload as { file: string; data: { competencies?: string[] } };
  return {
    name: doc.name,
    title: doc.title,
    version: doc.version,
    description: doc.description,
    competencies: payload.data.competencies ?? [],
  };
}
