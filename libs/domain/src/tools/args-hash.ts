import { createHash } from 'node:crypto';

/**
 * `sha256:<hex>` of the canonical JSON of a tool call's arguments (object keys sorted at every
 * level): what the audit trail and the Escalated journal keep instead of the arguments, which may
 * hold personal data (docs/tools.md).
 */
export function argsHash(args: Record<string, unknown>): string {
  return `sha256:${createHash('sha256').update(canonicalJson(args)).digest('hex')}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
