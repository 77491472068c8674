import type { TSchema } from 'typebox';
import type { TLocalizedValidationError } from 'typebox/error';
import { Settings } from 'typebox/system';
import { Value } from 'typebox/value';

/** Enough for every fault of a plausible pack; TypeBox stops at 8 by default. */
const MAX_ERRORS = 200;

/**
 * Every schema violation of `value`, one line each, led by the field's path
 * (`controls[2].attestation: must be one of "required", "none"`). The caller replaces the
 * `controls[N]` prefix with the control's id, so that a message names the control too.
 */
export function describeSchemaErrors(
  schema: TSchema,
  value: unknown,
): Array<{ path: string[]; message: string }> {
  const errors = collect(schema, value);
  // A union's own error speaks for its branches; their errors would only repeat it.
  const unions = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/anyOf/`);
  const out: Array<{ path: string[]; message: string }> = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (unions.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    for (const line of describe(error)) {
      const key = `${line.path.join('.')}:${line.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(line);
    }
  }
  return out;
}

function collect(schema: TSchema, value: unknown): TLocalizedValidationError[] {
  // Settings are process-global; the call is synchronous, so restoring in `finally` cannot leak.
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: MAX_ERRORS });
  try {
    return Value.Errors(schema, value);
  } finally {
    Settings.Set({ maxErrors: previous });
  }
}

function describe(error: TLocalizedValidationError): Array<{ path: string[]; message: string }> {
  const path = segments(error.instancePath);
  switch (error.keyword) {
    case 'additionalProperties':
      return error.params.additionalProperties.map((name) => ({
        path: [...path, name],
        message: 'unknown field',
      }));
    case 'boolean':
      // The `additionalProperties: false` twin of the error above.
      return error.schemaPath.endsWith('/additionalProperties') ? [] : [{ path, message: error.message }];
    case 'required':
      return error.params.requiredProperties.map((name) => ({
        path: [...path, name],
        message: 'required field is missing',
      }));
    case 'const':
      return [{ path, message: `must be ${JSON.stringify(error.params.allowedValue)}` }];
    default:
      return [{ path, message: error.message }];
  }
}

function segments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** `["controls", "2", "evidence", "0", "kind"]` -> `controls[2].evidence[0].kind`. */
export function fieldPath(path: readonly string[]): string {
  let out = '';
  for (const segment of path) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else out += (out === '' ? '' : '.') + segment;
  }
  return out === '' ? '(file)' : out;
}
