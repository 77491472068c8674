import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import type { SchemaError } from './schema-errors.ts';

/**
 * Validates requests with TypeBox (the same library that declares the schemas), replacing
 * Fastify's ajv defaults on purpose:
 * - bodies are never type-coerced (ajv's `coerceTypes` would turn `{"name": 5}` into "5" and hide
 *   the 422 the spec requires for a wrong field type), and unknown fields are reported, not
 *   silently stripped (ajv's `removeAdditional`);
 * - query strings, path params and headers arrive as strings and are converted (`"5"` -> 5);
 * - schema `default`s are filled in for every part;
 * - a request without a body is accepted as `{}` when the body schema is an object with no
 *   required property (e.g. POST /auth/keys/{id}/rotate, whose body is optional).
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  const bodyOptional = isObjectWithoutRequired(schema);
  const defaults = hasDefaults(schema);
  // A body is freshly parsed JSON that nothing else holds: without defaults to fill in, there is
  // nothing to copy or walk (the interpreted Default + Clone were most of a small body's cost).
  // Path params and headers whose properties are all strings (an agent id, an idempotency key)
  // have nothing to convert either: the compiled check alone (docs/performance.md, issue 23).
  const asIs = !defaults && (httpPart === 'body' || isObjectOfStrings(schema));
  return (input: unknown) => {
    let value = input;
    if (httpPart === 'body' && (value === null || value === undefined)) {
      if (!bodyOptional) return { error: [bodyRequired] };
      value = {};
    }
    let candidate = asIs ? value : Value.Default(schema, Value.Clone(value));
    if (httpPart !== 'body' && !asIs) candidate = Value.Convert(schema, candidate);
    if (check.Check(candidate)) return { value: candidate };
    return { error: check.Errors(candidate) as unknown as SchemaError[] };
  };
};

const bodyRequired: SchemaError = {
  keyword: 'required',
  instancePath: '',
  schemaPath: '#',
  params: {},
  message: 'request body is required',
};

function isObjectWithoutRequired(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as { type?: unknown; required?: unknown };
  return s.type === 'object' && (!Array.isArray(s.required) || s.required.length === 0);
}

/** An object schema whose every property is a plain string (no union, no nested object): strings need no conversion. */
export function isObjectOfStrings(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as { type?: unknown; properties?: unknown };
  if (s.type !== 'object' || typeof s.properties !== 'object' || s.properties === null) return false;
  const combinators = ['anyOf', 'oneOf', 'allOf', 'not'];
  return Object.values(s.properties).every(
    (property) =>
      typeof property === 'object' &&
      property !== null &&
      (property as { type?: unknown }).type === 'string' &&
      !combinators.some((keyword) => Object.hasOwn(property, keyword)),
  );
}

/**
 * True when a `default` keyword appears anywhere in the schema. A property that happens to be
 * named `default` also counts: that only keeps the (correct) slow path.
 */
export function hasDefaults(schema: unknown, seen = new Set<object>()): boolean {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return false;
  seen.add(schema);
  if (!Array.isArray(schema) && Object.hasOwn(schema, 'default')) return true;
  return Object.values(schema).some((child) => hasDefaults(child, seen));
}
