import { Errors, type PlatformError } from '@agent-platform/domain';

/** One schema validation error as TypeBox (and ajv) report it. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
}

export type SchemaPart = 'body' | 'querystring' | 'params' | 'headers';

const PART_NAMES: Record<SchemaPart, string> = {
  body: 'field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/**
 * Maps schema validation errors to the spec's categories (§Errors, "Other status codes"):
 * a body field of the wrong JSON type is 422 `MalformedBody`; everything else (missing field,
 * enum, pattern, format, bounds, unknown field) is 400 `ValidationError`. Query, path and header
 * problems are always 400: they arrive as strings, so "wrong type" means "bad value" there.
 * The message names the field, so a client can fix its request without reading docs.
 */
export function schemaErrorToPlatformError(errors: readonly SchemaError[], part: SchemaPart): PlatformError {
  const primary = pickPrimary(errors);
  if (primary === undefined) return Errors.validation(`invalid ${part}`);
  const noun = PART_NAMES[part];
  const field = fieldName(primary);
  const where = field === '' ? (part === 'body' ? 'request body' : part) : `${noun} '${field}'`;
  const details = { field: field === '' ? null : field, location: part, rule: primary.keyword };

  if (primary.keyword === 'required') {
    const missing = field === '' ? 'request body is required' : `missing required ${noun} '${field}'`;
    return Errors.validation(missing, details);
  }
  if (primary.keyword === 'additionalProperties') return Errors.validation(`unknown ${noun} '${field}'`, details);

  const wrongType = wrongTypeOf(primary, errors);
  if (wrongType !== null) {
    const message = `${where} must be ${wrongType.join(' or ')}`;
    return part === 'body' ? Errors.malformedBody(message, details) : Errors.validation(message, details);
  }
  const allowed = allowedValues(primary, errors);
  if (allowed !== null) return Errors.validation(`${where} must be one of: ${allowed.join(', ')}`, details);
  return Errors.validation(`${where} ${primary.message ?? 'is invalid'}`, details);
}

/** Body fields reported missing (`''` for a missing body), from every error, not just the primary one. */
export function missingFields(errors: readonly SchemaError[]): string[] {
  return errors.filter((e) => e.keyword === 'required').map(fieldName);
}

/** The error to report: not a branch of a union (the union's own error speaks for it). */
function pickPrimary(errors: readonly SchemaError[]): SchemaError | undefined {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const isBranch = (e: SchemaError): boolean =>
    unions.some((u) => u !== e && (e.schemaPath.startsWith(`${u.schemaPath}/anyOf/`) || e.schemaPath.startsWith(`${u.schemaPath}/oneOf/`)));
  const top = errors.filter((e) => !isBranch(e));
  // TypeBox reports `additionalProperties: false` twice (a `boolean` error on the extra key first).
  return top.find((e) => e.keyword !== 'boolean') ?? top[0];
}

/** The field's dotted path, including the missing or unknown property for those keywords. */
function fieldName(error: SchemaError): string {
  const path = error.instancePath
    .split('/')
    .filter((s) => s.length > 0)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const p = error.params;
  const extra =
    error.keyword === 'required'
      ? first(p.requiredProperties) ?? (p.missingProperty as string | undefined)
      : error.keyword === 'additionalProperties'
        ? first(p.additionalProperties) ?? (p.additionalProperty as string | undefined)
        : undefined;
  if (extra !== undefined) path.push(extra);
  return path.join('.');
}

function first(value: unknown): string | undefined {
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
}

/** Expected JSON types when the value's type matched nothing, else null. */
function wrongTypeOf(primary: SchemaError, errors: readonly SchemaError[]): string[] | null {
  if (primary.keyword === 'type') return [String(primary.params.type)];
  if (primary.keyword !== 'anyOf' && primary.keyword !== 'oneOf') return null;
  const branches = branchErrors(primary, errors);
  if (branches.size === 0) return null;
  const types: string[] = [];
  for (const list of branches.values()) {
    const typeError = list.find((e) => e.keyword === 'type' && e.instancePath === primary.instancePath);
    if (typeError === undefined) return null;
    types.push(String(typeError.params.type));
  }
  return [...new Set(types)];
}

function allowedValues(primary: SchemaError, errors: readonly SchemaError[]): string[] | null {
  if (primary.keyword === 'enum' && Array.isArray(primary.params.allowedValues)) return primary.params.allowedValues.map(String);
  if (primary.keyword === 'const') return [String(primary.params.allowedValue)];
  if (primary.keyword !== 'anyOf' && primary.keyword !== 'oneOf') return null;
  const values: string[] = [];
  for (const list of branchErrors(primary, errors).values()) {
    const c = list.find((e) => e.keyword === 'const' && e.instancePath === primary.instancePath);
    if (c === undefined) return null;
    values.push(String(c.params.allowedValue));
  }
  return values.length > 0 ? values : null;
}

function branchErrors(union: SchemaError, errors: readonly SchemaError[]): Map<string, SchemaError[]> {
  const prefix = `${union.schemaPath}/${union.keyword}/`;
  const byBranch = new Map<string, SchemaError[]>();
  for (const e of errors) {
    if (!e.schemaPath.startsWith(prefix)) continue;
    const index = e.schemaPath.slice(prefix.length).split('/')[0] ?? '';
    byBranch.set(index, [...(byBranch.get(index) ?? []), e]);
  }
  return byBranch;
}
