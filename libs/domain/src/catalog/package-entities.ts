import type {
  AdapterPayload,
  AgentTemplatePayload,
  CompetencyPayload,
  ContractPayload,
  PackageSection,
  SkillPayload,
  WorkflowTemplatePayload,
} from '@agent-platform/contracts';
import type { AgentRecord } from '../agents/agent-record.ts';
import type {
  CompetencyRecord,
  ContractRecord,
  IntegrationRecord,
  SkillRecord,
  WorkflowRecord,
} from './catalog-records.ts';

/**
 * The entity records a package realises. Each builder takes the record the previous version
 * left (null on a first install) and keeps what an upgrade must keep: ids, creation times, and
 * for agents their state, model preference and uptime start (spec "Rules of the model" 1).
 */

export function agentFromTemplate(
  meta: PackageSection,
  payload: AgentTemplatePayload,
  previous: AgentRecord | null,
  fresh: { id: string; now: string },
): AgentRecord {
  return {
    id: previous?.id ?? fresh.id,
    name: meta.name,
    version: meta.version,
    state: previous?.state ?? 'Suspended',
    description: payload.description,
    prompt: payload.system_prompt,
    equipped_competencies: [...payload.competencies],
    allow_skill_tools: [...payload.allow_skill_tools],
    allow_integration_tools: [...payload.allow_integration_tools],
    model_preference: previous?.model_preference ?? null,
    created_at: previous?.created_at ?? fresh.now,
    updated_at: fresh.now,
    running_since: previous?.running_since ?? null,
  };
}

export function competencyFromPackage(
  meta: PackageSection,
  payload: CompetencyPayload,
  previous: CompetencyRecord | null,
  now: string,
): CompetencyRecord {
  return {
    id: meta.name,
    name: meta.name,
    version: meta.version,
    description: payload.description,
    prompt: payload.system_prompt,
    skills: [...payload.skills],
    tools: [...payload.tools],
    contracts: [...payload.contracts],
    integrations: [...payload.integrations],
    settings: payload.settings,
    inputs: payload.inputs,
    outputs: payload.outputs,
    schedule: payload.schedule ?? null,
    schedule_action: payload.schedule_action ?? null,
    installed_at: previous?.installed_at ?? now,
    updated_at: now,
  };
}

export function skillFromPackage(
  meta: PackageSection,
  payload: SkillPayload,
  previous: SkillRecord | null,
  now: string,
): SkillRecord {
  return {
    id: meta.name,
    name: meta.name,
    version: meta.version,
    description: payload.description,
    runtime: payload.runtime,
    tools: payload.tools,
    entry: payload.entry ?? null,
    config: payload.config,
    body: payload.body,
    installed_at: previous?.installed_at ?? now,
    updated_at: now,
  };
}

export function integrationFromPackage(
  meta: PackageSection,
  manifest: Pick<IntegrationRecord, 'implements' | 'idempotent_keys'>,
  payload: { file: 'mcp.json'; data: unknown } | { file: 'adapter.json'; data: AdapterPayload },
  previous: IntegrationRecord | null,
  now: string,
): IntegrationRecord {
  return {
    id: meta.name,
    name: meta.name,
    version: meta.version,
    description: meta.description,
    transport: payload.file === 'mcp.json' ? 'mcp' : payload.data.kind,
    implements: manifest.implements,
    idempotent_keys: manifest.idempotent_keys,
    payload: payload.data,
    installed_at: previous?.installed_at ?? now,
    updated_at: now,
  };
}

export function contractFromPackage(
  meta: PackageSection,
  payload: ContractPayload,
  previous: ContractRecord | null,
  now: string,
): ContractRecord {
  return {
    id: meta.name,
    name: meta.name,
    version: meta.version,
    description: meta.description,
    schema_version: payload.schema_version,
    tools: payload.tools,
    installed_at: previous?.installed_at ?? now,
    updated_at: now,
  };
}

export function workflowFromPackage(
  meta: PackageSection,
  payload: WorkflowTemplatePayload,
  previous: WorkflowRecord | null,
  fresh: { id: string; now: string },
): WorkflowRecord {
  return {
    id: previous?.id ?? fresh.id,
    name: meta.name,
    version: meta.version,
    description: payload.description,
    steps: payload.steps,
    variables: payload.variables,
    agents_required: [...payload.agents_required],
    workflow_type: payload.workflow_type ?? meta.name,
    uninstalled_at: null,
    created_at: previous?.created_at ?? fresh.now,
    updated_at: fresh.now,
  };
}
