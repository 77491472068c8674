import { PlatformConfig } from '@agent-platform/contracts';

type Schema = Record<string, unknown> & {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  patternProperties?: Record<string, Schema>;
  minimum?: number;
};

/**
 * The key reference of docs/config.md, rendered from the schema so that the two cannot drift
 * (a test compares them): one section per table, one row per key with type, default and meaning.
 */
export function renderConfigReference(): string {
  const root = PlatformConfig as unknown as Schema;
  const sections = Object.entries(root.properties ?? {}).map(([name, schema]) => renderSection(name, schema));
  return `${sections.join('\n\n')}\n`;
}

function renderSection(name: string, schema: Schema): string {
  const isArray = schema.type === 'array';
  const body = isArray ? (schema.items ?? {}) : schema;
  const heading = isArray ? `### \`[[${name}]]\`` : `### \`[${name}]\``;
  const rows = keyRows(body, isArray ? `${name}[]` : name);
  return [
    heading,
    '',
    schema.description ?? '',
    '',
    '| Key | Type | Default | Meaning |',
    '|---|---|---|---|',
    ...rows.map((cells) => `| ${cells.map(escapeCell).join(' | ')} |`),
  ].join('\n');
}

function keyRows(table: Schema, prefix: string): string[][] {
  const required = new Set(table.required ?? []);
  return Object.entries(table.properties ?? {}).flatMap(([key, schema]) => {
    const path = `${prefix}.${key}`;
    if (schema.type === 'object' && schema.properties !== undefined) {
      const presence = 'default' in schema ? 'table' : 'table, optional';
      return [[`\`[${path}]\``, presence, '', schema.description ?? ''], ...keyRows(schema, path)];
    }
    return [[`\`${path}\``, typeOf(schema), defaultOf(schema, required.has(key)), schema.description ?? '']];
  });
}

function typeOf(schema: Schema): string {
  if (schema.anyOf !== undefined) return `one of ${schema.anyOf.map((v) => JSON.stringify(v.const)).join(', ')}`;
  if (schema.type === 'array') return `array of ${schema.items?.type ?? 'value'}s`;
  if (schema.type === 'object' && schema.patternProperties !== undefined) {
    const value = Object.values(schema.patternProperties)[0];
    return `table of ${value?.type ?? 'value'}s`;
  }
  const bound = schema.minimum === undefined ? '' : ` >= ${schema.minimum}`;
  return `${schema.type ?? 'value'}${bound}`;
}

function defaultOf(schema: Schema, required: boolean): string {
  if ('default' in schema) return `\`${toml(schema.default)}\``;
  return required ? 'required' : 'unset';
}

function toml(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(toml).join(', ')}]`;
  if (value !== null && typeof value === 'object') return '{}';
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|');
}
