import type {
  AdapterPayload,
  AgentTemplatePayload,
  CompetencyPayload,
  ContractPayload,
  McpPayload,
  PackageType,
  SkillPayload,
  WorkflowTemplatePayload,
} from '@agent-platform/contracts';
import type { FileProblems } from '../problems.ts';
import { checkAdapterPayload } from './adapter-payload.ts';
import { checkAgentPayload } from './agent-payload.ts';
import { checkCompetencyPayload } from './competency-payload.ts';
import { checkContractPayload } from './contract-payload.ts';
import { checkMcpPayload } from './mcp-payload.ts';
import { checkSkillPayload } from './skill-payload.ts';
import { checkWorkflowPayload } from './workflow-payload.ts';

/** A package's parsed payload, tagged by its file name (an integration has one of two). */
export type PackagePayload =
  | { file: 'SKILL.md'; data: SkillPayload }
  | { file: 'COMPETENCY.md'; data: CompetencyPayload }
  | { file: 'AGENT.md'; data: AgentTemplatePayload }
  | { file: 'workflow.json'; data: WorkflowTemplatePayload }
  | { file: 'mcp.json'; data: McpPayload }
  | { file: 'adapter.json'; data: AdapterPayload }
  | { file: 'CONTRACT.json'; data: ContractPayload };
export type PayloadFile = PackagePayload['file'];

/** The payload file(s) each package type may hold (spec §Package manifests); exactly one is present. */
export const PAYLOAD_FILES: Readonly<Record<PackageType, readonly PayloadFile[]>> = {
  skill: ['SKILL.md'],
  competency: ['COMPETENCY.md'],
  'agent-template': ['AGENT.md'],
  'workflow-template': ['workflow.json'],
  integration: ['mcp.json', 'adapter.json'],
  contract: ['CONTRACT.json'],
};

/** Checks one payload file's bytes; the parsed payload when it has no fault. */
export function checkPayload(
  file: PayloadFile,
  bytes: Uint8Array,
  p: FileProblems,
  packageVersion?: string,
): PackagePayload | undefined {
  switch (file) {
    case 'SKILL.md':
      return tag(file, checkSkillPayload(bytes, p, packageVersion));
    case 'COMPETENCY.md':
      return tag(file, checkCompetencyPayload(bytes, p));
    case 'AGENT.md':
      return tag(file, checkAgentPayload(bytes, p));
    case 'workflow.json':
      return tag(file, checkWorkflowPayload(bytes, p));
    case 'mcp.json':
      return tag(file, checkMcpPayload(bytes, p));
    case 'adapter.json':
      return tag(file, checkAdapterPayload(bytes, p));
    case 'CONTRACT.json':
      return tag(file, checkContractPayload(bytes, p));
  }
}

function tag<F extends PayloadFile>(
  file: F,
  data: Extract<PackagePayload, { file: F }>['data'] | undefined,
): PackagePayload | undefined {
  return data === undefined ? undefined : ({ file, data } as PackagePayload);
}
