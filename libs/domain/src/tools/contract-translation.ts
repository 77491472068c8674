import type { ContractImplementation, ContractTool } from '@agent-platform/contracts';
import type { IntegrationTool } from '../integrations/integration-tools.ts';

/**
 * How a contract tool call becomes a call of the integration's native tool and back, from the
 * integration's `[implements.<contract>]` (spec §Package manifests): `tool_map` names the native
 * tool (absent: the same name), `field_map.<tool>` renames the contract's argument fields to the
 * native ones (fields it does not name pass unchanged). A result that is a JSON object has its
 * top-level native field names renamed back to the contract's. docs/tools.md "Contracts".
 */
export function nativeToolName(impl: ContractImplementation, contractTool: string): string {
  return impl.tool_map[contractTool] ?? contractTool;
}

export function toNativeArgs(impl: ContractImplementation, contractTool: string, args: Record<string, unknown>): Record<string, unknown> {
  const fields = impl.field_map[contractTool] ?? {};
  return Object.fromEntries(Object.entries(args).map(([key, value]) => [fields[key] ?? key, value]));
}

export function toContractResult(impl: ContractImplementation, contractTool: string, text: string): string {
  const fields = impl.field_map[contractTool] ?? {};
  const back = new Map(Object.entries(fields).map(([contractField, nativeField]) => [nativeField, contractField]));
  if (back.size === 0) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return text;
  return JSON.stringify(Object.fromEntries(Object.entries(parsed).map(([key, value]) => [back.get(key) ?? key, value])));
}

/** A reason the integration's live tools cannot carry the contract. */
export interface MappingProblem {
  tool: string;
  field?: string;
  message: string;
}

/**
 * Beyond the spec (issue 10 item 4): at bind time, every contract tool must map to a native tool
 * the integration offers, and every native field the mapping names must be accepted by that
 * tool's input schema (listed in `properties`, or the schema admits additional properties).
 */
export function checkMapping(
  contractTools: readonly ContractTool[],
  impl: ContractImplementation,
  liveTools: readonly IntegrationTool[],
): MappingProblem[] {
  const problems: MappingProblem[] = [];
  const byName = new Map(liveTools.map((t) => [t.name, t]));
  for (const tool of contractTools) {
    const native = nativeToolName(impl, tool.name);
    const live = byName.get(native);
    if (live === undefined) {
      problems.push({ tool: tool.name, message: `contract tool '${tool.name}' maps to '${native}', which the integration does not offer` });
      continue;
    }
    for (const [contractField, nativeField] of Object.entries(impl.field_map[tool.name] ?? {})) {
      if (!acceptsField(live.input_schema, nativeField))
        problems.push({
          tool: tool.name,
          field: contractField,
          message: `field '${contractField}' of contract tool '${tool.name}' maps to '${nativeField}', which '${native}' does not accept`,
        });
    }
  }
  return problems;
}

function acceptsField(schema: Record<string, unknown>, field: string): boolean {
  const properties = schema.properties;
  if (properties !== null && typeof properties === 'object' && field in properties) return true;
  return schema.additionalProperties !== undefined && schema.additionalProperties !== false;
}
