import type {
  CompetencyIo,
  CompetencySetting,
  ContractImplementation,
  ContractTool,
  PackageManifest,
  PackageType,
  SkillRuntime,
  SkillTool,
  WorkflowStep,
} from '@agent-platform/contracts';
import type { Collection, Store } from '@agent-platform/store';

/** Where an installed package came from: a local directory, or a registry (docs/catalog.md). */
export type PackageOrigin = 'path' | 'registry';

/**
 * What the catalog stores (docs/catalog.md). One `installed_packages` row per package (id = the
 * package name, DECISIONS D4), plus the entity the package realises, which later features read:
 * agents (agent-store.ts), competencies, skills, integrations, contracts and workflows. Skills,
 * competencies, integrations and contracts are identified by their package name (D9); agents and
 * workflows by a UUID kept across upgrades.
 */
export interface InstalledPackageRecord {
  id: string;
  name: string;
  type: PackageType;
  version: string;
  title: string;
  description: string;
  installed_at: string;
  updated_at: string;
  content_hash: string;
  manifest: PackageManifest;
  /** The parsed payload file (`{file, data}`), as validated. */
  payload: unknown;
  /** The agent, workflow (UUID) or package name this package realised. */
  entity_id: string;
  /** Packages this one needs: `[dependencies]` keys plus a workflow's `agents_required`. */
  dependencies: string[];
  /** Absent on records written before installs from a registry existed: `path`. */
  source?: PackageOrigin;
}

export interface CompetencyRecord {
  id: string;
  name: string;
  version: string;
  description: string;
  /** The COMPETENCY.md body: appended to the system prompt of every agent that equips it. */
  prompt: string;
  skills: string[];
  tools: string[];
  /** Contracts an agent equipping this competency needs an installed integration for (activation check). */
  contracts: string[];
  integrations: string[];
  settings: CompetencySetting[];
  inputs: CompetencyIo[];
  outputs: CompetencyIo[];
  schedule: string | null;
  schedule_action: string | null;
  installed_at: string;
  updated_at: string;
}

export interface SkillRecord {
  id: string;
  name: string;
  version: string;
  description: string;
  runtime: SkillRuntime;
  tools: SkillTool[];
  entry: string | null;
  config: Record<string, unknown>;
  /** The SKILL.md body: the instructions of a promptonly skill. */
  body: string;
  installed_at: string;
  updated_at: string;
}

export interface IntegrationRecord {
  id: string;
  name: string;
  version: string;
  description: string;
  /** `mcp` (mcp.json) or the adapter kind, `rest` or `soap` (adapter.json). */
  transport: 'mcp' | 'rest' | 'soap';
  /** `[implements.<contract>]`: the contracts this integration provides. */
  implements: Record<string, ContractImplementation>;
  /**
   * `[standards] idempotent_keys`: its server de-duplicates on the idempotency key (docs/tools.md
   * "The tool-call journal"); `[integrations.idempotent_keys]` overrides it. Absent on records
   * installed before it existed: false.
   */
  idempotent_keys?: boolean;
  /** The mcp.json or adapter.json content. */
  payload: unknown;
  installed_at: string;
  updated_at: string;
}

export interface ContractRecord {
  id: string;
  name: string;
  version: string;
  description: string;
  schema_version: string;
  tools: ContractTool[];
  installed_at: string;
  updated_at: string;
}

/** A WorkflowDefinition (spec §Resources) as installed from a workflow-template package. */
export interface WorkflowRecord {
  id: string;
  name: string;
  version: string;
  description: string;
  steps: WorkflowStep[];
  variables: Record<string, string>;
  agents_required: string[];
  /** What its runs count under: workflow.json `workflow_type`, else the package name. */
  workflow_type: string;
  /**
   * Set when its package was uninstalled: the record stays (hidden from GET /workflows) so that
   * runs in flight finish and GET /workflows/{id} shows the drain; a reinstall clears it.
   */
  uninstalled_at: string | null;
  created_at: string;
  updated_at: string;
}

export const CATALOG_COLLECTIONS = {
  packages: 'installed_packages',
  competencies: 'competencies',
  skills: 'skills',
  integrations: 'integrations',
  contracts: 'contracts',
  workflows: 'workflows',
} as const;

export interface CatalogCollections {
  packages: Collection<InstalledPackageRecord>;
  competencies: Collection<CompetencyRecord>;
  skills: Collection<SkillRecord>;
  integrations: Collection<IntegrationRecord>;
  contracts: Collection<ContractRecord>;
  workflows: Collection<WorkflowRecord>;
}

/** The catalog's collections over `store` (opening a collection is cheap and idempotent). */
export function catalogCollections(store: Store): CatalogCollections {
  return {
    packages: store.collection<InstalledPackageRecord>(CATALOG_COLLECTIONS.packages, {
      indexes: [{ field: 'type' }],
    }),
    competencies: store.collection<CompetencyRecord>(CATALOG_COLLECTIONS.competencies, { readMostly: true }),
    skills: store.collection<SkillRecord>(CATALOG_COLLECTIONS.skills, { readMostly: true }),
    integrations: store.collection<IntegrationRecord>(CATALOG_COLLECTIONS.integrations),
    contracts: store.collection<ContractRecord>(CATALOG_COLLECTIONS.contracts),
    workflows: store.collection<WorkflowRecord>(CATALOG_COLLECTIONS.workflows, {
      indexes: [{ field: 'name', unique: true }],
    }),
  };
}
