import { MCP_TOOLS, type McpToolContract } from '@agent-platform/contracts';
import { TOOL_LIST } from './tool-list.ts';

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

/** "integer 0-300", "string (1-256 chars)", "one of Running, Suspended" for an argument row. */
function typeOf(schema: JsonSchema): string {
  if (schema.enum !== undefined) return `one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if (schema.anyOf !== undefined) return schema.anyOf.map(typeOf).join(' or ');
  const bounds: string[] = [];
  if (schema.minimum !== undefined || schema.maximum !== undefined)
    bounds.push(
      `${schema.minimum ?? ''}-${schema.maximum ?? ''}`.replace(/^-/, '<= ').replace(/-$/, ' or more'),
    );
  if (schema.maxLength !== undefined) bounds.push(`${schema.minLength ?? 0}-${schema.maxLength} chars`);
  else if (schema.minLength !== undefined) bounds.push('non-empty');
  if (schema.pattern !== undefined)
    bounds.push(/^\^\[0-9a-fA-F\]\{8\}-/.test(schema.pattern) ? 'a UUID' : `matching \`${schema.pattern}\``);
  return [schema.type ?? 'any', ...bounds].join(', ');
}

function argumentRows(schema: JsonSchema): string {
  const entries = Object.entries(schema.properties ?? {});
  if (entries.length === 0) return 'No arguments.\n';
  const rows = entries.map(([name, property]) => {
    const required = schema.required?.includes(name)
      ? 'yes'
      : property.default === undefined
        ? 'no'
        : `no (default \`${JSON.stringify(property.default)}\`)`;
    return `| \`${name}\` | ${typeOf(property)} | ${required} | ${(property.description ?? '').replaceAll('|', '\\|')} |`;
  });
  return ['| Argument | Type | Required | Meaning |', '|---|---|---|---|', ...rows, ''].join('\n');
}

function section(contract: McpToolContract): string {
  const listed = TOOL_LIST.find((tool) => tool.name === contract.name);
  if (listed === undefined) throw new Error(`tool ${contract.name} is not listed`);
  const effect = contract.readOnly
    ? 'read-only, audited only when refused (like a GET)'
    : 'changes state, audited like its route (refusals too)';
  return [
    `### \`${contract.name}\`: ${contract.title}`,
    '',
    contract.description,
    '',
    `Permission: \`${contract.action}\`, as \`${contract.route}\`; ${effect}.`,
    '',
    argumentRows(listed.inputSchema),
    '<details><summary>Input schema (JSON Schema, as tools/list sends it)</summary>',
    '',
    '```json',
    JSON.stringify(listed.inputSchema, null, 2),
    '```',
    '',
    '</details>',
    '',
    '<details><summary>Output schema (the <code>structuredContent</code> of a successful call)</summary>',
    '',
    '```json',
    JSON.stringify(listed.outputSchema, null, 2),
    '```',
    '',
    '</details>',
    '',
  ].join('\n');
}

/** The tool reference of docs/mcp.md, rendered from the contracts (`npm run docs:generate`). */
export function renderMcpToolReference(): string {
  return MCP_TOOLS.map(section).join('\n');
}
