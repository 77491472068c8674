/**
 * Serializes a plain config object to TOML for tests: tables, arrays of tables, strings,
 * numbers, booleans and arrays of those. (smol-toml is a dependency of libs/config, not of this
 * app; the config shape is simple enough not to need it.)
 */
export function toTomlText(document: Record<string, unknown>): string {
  const lines: string[] = [];
  writeTable(document, [], lines);
  return `${lines.join('\n')}\n`;
}

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTableArray(value: unknown): value is Table[] {
  return Array.isArray(value) && value.length > 0 && value.every(isTable);
}

function key(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name);
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(scalar).join(', ')}]`;
  if (isTable(value)) return `{ ${Object.entries(value).map(([k, v]) => `${key(k)} = ${scalar(v)}`).join(', ')} }`;
  throw new TypeError(`cannot write ${String(value)} as TOML`);
}

function writeTable(table: Table, path: string[], lines: string[]): void {
  const entries = Object.entries(table).filter(([, v]) => v !== undefined && v !== null);
  for (const [name, value] of entries) {
    if (!isTable(value) && !isTableArray(value)) lines.push(`${key(name)} = ${scalar(value)}`);
  }
  for (const [name, value] of entries) {
    const child = [...path, name];
    if (isTable(value)) {
      lines.push('', `[${child.map(key).join('.')}]`);
      writeTable(value, child, lines);
    } else if (isTableArray(value)) {
      for (const item of value) {
        lines.push('', `[[${child.map(key).join('.')}]]`);
        writeTable(item, child, lines);
      }
    }
  }
}
