import { didYouMean } from '@agent-platform/contracts';
import type { TSchema } from 'typebox';
import type { TLocalizedValidationError } from 'typebox/error';
import { Settings } from 'typebox/system';
import { Value } from 'typebox/value';

/** Enough for every fault of any plausible file; TypeBox stops at 8 by default. */
const MAX_ERRORS = 500;
const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

/**
 * Every schema violation of `value`, one line each, led by the dotted key path
 * (`server.body_limit_bytes: must be >= 1`, `auth.mdoe: unknown key`). Values are not echoed
 * except the short ones of enumerations: a rejected value may be a secret.
 */
export function describeSchemaErrors(schema: TSchema, value: unknown): string[] {
  const errors = collectErrors(schema, value);
  const unions = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/anyOf/`);
  const lines: string[] = [];
  for (const error of errors) {
    if (unions.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    lines.push(...describeError(schema, value, error));
  }
  return [...new Set(lines)];
}

function collectErrors(schema: TSchema, value: unknown): TLocalizedValidationError[] {
  // Settings are process-global; the call is synchronous, so restoring in `finally` cannot leak.
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: MAX_ERRORS });
  try {
    return Value.Errors(schema, value);
  } finally {
    Settings.Set({ maxErrors: previous });
  }
}

function describeError(root: TSchema, value: unknown, error: TLocalizedValidationError): string[] {
  const segments = pointerSegments(error.instancePath);
  const at = keyPath(segments);
  const schema = schemaAt(root, error.schemaPath);
  switch (error.keyword) {
    case 'additionalProperties': {
      const known = Object.keys((schema?.properties as Record<string, unknown> | undefined) ?? {});
      return error.params.additionalProperties.map((name) => `${keyPath([...segments, name])}: unknown key${didYouMean(name, known)}`);
    }
    case 'boolean':
      // The `additionalProperties: false` twin of the error above.
      return error.schemaPath.endsWith('/additionalProperties') ? [] : [`${at}: ${error.message}`];
    case 'required':
      return error.params.requiredProperties.map((name) => `${keyPath([...segments, name])}: required key is missing`);
    case 'anyOf':
      return [`${at}: ${describeUnion(schema, valueAt(value, segments))}`];
    case 'type':
      return [`${at}: must be ${typeName(String(error.params.type))} (got ${describeValue(valueAt(value, segments))})`];
    case 'pattern':
      return [
        error.params.pattern === ENV_NAME_PATTERN
          ? `${at}: must be an environment variable name (letters, digits and _, not starting with a digit)`
          : `${at}: must match ${error.params.pattern}`,
      ];
    default:
      return [`${at}: ${error.message}`];
  }
}

function describeUnion(schema: Record<string, unknown> | undefined, actual: unknown): string {
  const variants = (schema?.anyOf as Record<string, unknown>[] | undefined) ?? [];
  if (variants.length > 0 && variants.every((v) => 'const' in v)) {
    const allowed = variants.map((v) => JSON.stringify(v.const)).join(', ');
    const got = typeof actual === 'string' && actual.length <= 40 ? JSON.stringify(actual) : describeValue(actual);
    return `must be one of ${allowed} (got ${got})`;
  }
  const types = variants.map((v) => typeName(typeof v.type === 'string' ? v.type : 'value'));
  return `must be ${types.join(' or ')} (got ${describeValue(actual)})`;
}

function typeName(type: string): string {
  const names: Record<string, string> = { object: 'a table', array: 'an array', integer: 'an integer', null: 'null' };
  return names[type] ?? `a ${type}`;
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'a table';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a float';
  return `a ${typeof value}`;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** `["providers", "0", "id"]` -> `providers[0].id`; odd key names are quoted as in TOML. */
export function keyPath(segments: string[]): string {
  let out = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else out += (out === '' ? '' : '.') + (/^[A-Za-z0-9_-]+$/.test(segment) ? segment : JSON.stringify(segment));
  }
  return out === '' ? '(file)' : out;
}

function valueAt(value: unknown, segments: string[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function schemaAt(root: TSchema, schemaPath: string): Record<string, unknown> | undefined {
  let current: unknown = root;
  for (const segment of pointerSegments(schemaPath.replace(/^#/, ''))) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current !== null && typeof current === 'object' ? (current as Record<string, unknown>) : undefined;
}
