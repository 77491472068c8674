import type { InstalledItem } from '@agent-platform/contracts';
import type { Collection, Doc } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { Store } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import { drainAdmission, setAdmission } from '../workflows/workflow-admissions.ts';
import type { Clock } from '../time/clock.ts';
import type { CatalogCollections, InstalledPackageRecord } from './catalog-records.ts';
import type { InstallAction, PlannedPackage } from './install-plan.ts';
import {
  agentFromTemplate,
  competencyFromPackage,
  contractFromPackage,
  integrationFromPackage,
  skillFromPackage,
  workflowFromPackage,
} from './package-entities.ts';

export interface ApplyDeps {
  store: Store;
  records: CatalogCollections;
  agents: AgentStore;
  clock: Clock;
  newId: () => string;
}

type Undo = () => Promise<void>;

/** Work run with the plan's writes, inside its all-or-nothing (the catalog's equip effects). */
export interface ApplyHooks {
  /** After every write: a throw undoes them all. */
  after(items: readonly InstalledItem[]): Promise<void>;
  /** After the writes were undone because of a failure (of a write or of `after`). Must not throw. */
  undone(items: readonly InstalledItem[]): Promise<void>;
}

const STATUS: Record<InstallAction, InstalledItem['status']> = {
  install: 'installed',
  upgrade: 'upgraded',
  unchanged: 'unchanged',
};

/**
 * Writes a checked plan in order. Each write records how to undo it; if a later write fails, the
 * ones already made are undone in reverse order, so a failed install leaves the catalog as it
 * found it. An undo that itself fails is skipped so the others still run, and the caller gets
 * the original error. `activate`: leave the plan's agents Running (their check already passed).
 */
export async function applyPlan(
  plan: readonly PlannedPackage[],
  deps: ApplyDeps,
  activate: boolean,
  hooks?: ApplyHooks,
): Promise<InstalledItem[]> {
  const undo: Undo[] = [];
  const items: InstalledItem[] = [];
  try {
    for (const step of plan) {
      const { type } = step.pkg.manifest.package;
      const untouched = step.action === 'unchanged' && !(activate && type === 'agent-template');
      const id =
        untouched && step.previous !== null
          ? step.previous.entity_id
          : await realise(step, deps, activate, undo);
      if (step.action !== 'unchanged') await writePackageRecord(step, id, deps, undo);
      items.push({
        type,
        name: step.name,
        version: step.version,
        id,
        status: STATUS[step.action],
        ...(step.deprecated === undefined ? {} : { deprecated: step.deprecated }),
      });
    }
    await hooks?.after(items);
    return items;
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => undefined);
    await hooks?.undone(items);
    throw error;
  }
}

async function realise(
  step: PlannedPackage,
  deps: ApplyDeps,
  activate: boolean,
  undo: Undo[],
): Promise<string> {
  const { manifest, payload } = step.pkg;
  const meta = manifest.package;
  const now = deps.clock.now().toISOString();
  const { records } = deps;
  switch (payload.file) {
    case 'AGENT.md':
      return realiseAgent(step, deps, activate, undo);
    case 'COMPETENCY.md':
      return (
        await replaceDoc(records.competencies, meta.name, undo, (prev) =>
          competencyFromPackage(meta, payload.data, prev, now),
        )
      ).id;
    case 'SKILL.md':
      return (
        await replaceDoc(records.skills, meta.name, undo, (prev) =>
          skillFromPackage(meta, payload.data, prev, now),
        )
      ).id;
    case 'mcp.json':
    case 'adapter.json':
      return (
        await replaceDoc(records.integrations, meta.name, undo, (prev) =>
          integrationFromPackage(meta, { implements: manifest.implements, idempotent_keys: manifest.standards?.idempotent_keys === true }, payload, prev, now),
        )
      ).id;
    case 'CONTRACT.json':
      return (
        await replaceDoc(records.contracts, meta.name, undo, (prev) =>
          contractFromPackage(meta, payload.data, prev, now),
        )
      ).id;
    case 'workflow.json': {
      const prev = (await records.workflows.find({ where: { name: meta.name }, limit: 1 }))[0]?.doc ?? null;
      const next = workflowFromPackage(meta, payload.data, prev, { id: deps.newId(), now });
      await replaceDoc(records.workflows, next.id, undo, () => next);
      // docs/workflows.md "Admission": the new version admits runs; a replaced one drains.
      undo.push(await setAdmission(deps.store, next.id, next.version, 'active', now));
      if (prev !== null && prev.uninstalled_at === null && prev.version !== next.version) {
        undo.push(await drainAdmission(deps.store, prev.id, prev.version, now));
      }
      return next.id;
    }
  }
}

async function realiseAgent(
  step: PlannedPackage,
  deps: ApplyDeps,
  activate: boolean,
  undo: Undo[],
): Promise<string> {
  const { manifest, payload } = step.pkg;
  if (payload.file !== 'AGENT.md') throw new TypeError('not an agent template');
  const now = deps.clock.now().toISOString();
  const running = (record: AgentRecord): AgentRecord =>
    activate && record.state !== 'Running' ? { ...record, state: 'Running', running_since: now } : record;
  const previous = await deps.agents.getByName(manifest.package.name);
  if (previous === null) {
    const created = await deps.agents.insert(
      running(agentFromTemplate(manifest.package, payload.data, null, { id: deps.newId(), now })),
    );
    undo.push(async () => {
      await deps.agents.delete(created.id);
    });
    return created.id;
  }
  // An unchanged template only changes state (activate: true); an upgrade rebuilds the agent from
  // the new template while keeping its id, state and model preference.
  const change = (current: AgentRecord): AgentRecord =>
    running(
      step.action === 'unchanged'
        ? current
        : agentFromTemplate(manifest.package, payload.data, current, { id: current.id, now }),
    );
  await deps.agents.update(previous.id, change);
  undo.push(async () => {
    await deps.agents.update(previous.id, () => previous);
  });
  return previous.id;
}

async function writePackageRecord(
  step: PlannedPackage,
  entityId: string,
  deps: ApplyDeps,
  undo: Undo[],
): Promise<void> {
  const { manifest, payload, content_hash } = step.pkg;
  const now = deps.clock.now().toISOString();
  await replaceDoc(deps.records.packages, step.name, undo, (prev): InstalledPackageRecord => ({
    id: step.name,
    name: step.name,
    type: manifest.package.type,
    version: step.version,
    title: manifest.package.title,
    description: manifest.package.description,
    installed_at: prev?.installed_at ?? now,
    updated_at: now,
    content_hash,
    manifest,
    payload,
    entity_id: entityId,
    dependencies: step.dependencies,
    source: step.origin,
  }));
}

/** Upserts the document `build` makes from the current one, noting how to put the current one back. */
async function replaceDoc<T extends Doc>(
  collection: Collection<T>,
  id: string,
  undo: Undo[],
  build: (previous: T | null) => T,
): Promise<T> {
  const previous = (await collection.get(id))?.doc ?? null;
  const next = build(previous);
  await collection.upsert(next);
  undo.push(async () => {
    if (previous === null) await collection.delete(id);
    else await collection.upsert(previous);
  });
  return next;
}
