import type { ContractPayload, ContractTool } from '@agent-platform/contracts';
import { checkKeys, isTable, pathOf, readArray, readBoolean, readString, typeProblem, type Table } from '../fields.ts';
import { countingProblems, type FileProblems } from '../problems.ts';
import { decodeText, parseJsonObject } from './payload-text.ts';
import { checkToolName } from './tool-name.ts';

/** The contract payload versions this platform reads (spec §Versioning 4). */
export const CONTRACT_SCHEMA_VERSIONS = ['1'] as const;
const KEYS = ['schema_version', 'tools'] as const;
const TOOL_KEYS = ['name', 'description', 'input_schema', 'output_schema', 'read_only'] as const;

/** CONTRACT.json: the tools a contract promises, each with the JSON Schema of its input. */
export function checkContractPayload(bytes: Uint8Array, problems: FileProblems): ContractPayload | undefined {
  const p = countingProblems(problems);
  const text = decodeText(bytes, p);
  const data = text === undefined ? undefined : parseJsonObject(text, p);
  if (data === undefined) return undefined;
  checkKeys(p, data, KEYS, '');
  const version = readString(p, data, 'schema_version', '') ?? '1';
  if (!(CONTRACT_SCHEMA_VERSIONS as readonly string[]).includes(version)) {
    p.add(
      'schema_version',
      'schema-version',
      `unsupported contract schema_version ${JSON.stringify(version.slice(0, 20))}: this platform reads ${CONTRACT_SCHEMA_VERSIONS.join(', ')}`,
    );
  }
  const items = readArray(p, data, 'tools', '', { required: true }) ?? [];
  if (Array.isArray(data.tools) && items.length === 0)
    p.add('tools', 'min-items', 'a contract promises at least one tool');
  const tools: ContractTool[] = [];
  items.forEach((item, i) => {
    const tool = checkTool(p, item, pathOf('tools', i));
    if (tool === undefined) return;
    if (tools.some((t) => t.name === tool.name))
      p.add(
        pathOf(pathOf('tools', i), 'name'),
        'duplicate-tool',
        `tool '${tool.name}' is defined more than once`,
      );
    else tools.push(tool);
  });
  return p.count() === 0 ? { schema_version: version, tools } : undefined;
}

function checkTool(p: FileProblems, item: unknown, at: string): ContractTool | undefined {
  if (!isTable(item)) {
    typeProblem(p, at, 'a tool object', item);
    return undefined;
  }
  checkKeys(p, item, TOOL_KEYS, at);
  const name = readString(p, item, 'name', at, { required: true });
  const description = readString(p, item, 'description', at);
  const input = readSchema(p, item, 'input_schema', at, true);
  const output = readSchema(p, item, 'output_schema', at, false);
  const readOnly = readBoolean(p, item, 'read_only', at);
  if (name === undefined || !checkToolName(p, name, pathOf(at, 'name')) || input === undefined)
    return undefined;
  const tool: ContractTool = { name, input_schema: input };
  if (description !== undefined) tool.description = description;
  if (output !== undefined) tool.output_schema = output;
  if (readOnly !== undefined) tool.read_only = readOnly;
  return tool;
}

/** A JSON Schema is an object; its content is checked by whoever validates tool calls against it. */
export function readSchema(
  p: FileProblems,
  item: Table,
  key: string,
  at: string,
  required: boolean,
): Table | undefined {
  const value = item[key];
  if (value === undefined) {
    if (required) p.add(pathOf(at, key), 'required', 'required key is missing');
    return undefined;
  }
  if (isTable(value)) return value;
  typeProblem(p, pathOf(at, key), 'a JSON Schema object', value);
  return undefined;
}
