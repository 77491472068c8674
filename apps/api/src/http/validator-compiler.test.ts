import { Type, type TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { hasDefaults, isObjectOfStrings, validatorCompiler } from './validator-compiler.ts';

function validate(schema: TSchema, httpPart: string, input: unknown) {
  const run = validatorCompiler({ schema, httpPart, method: 'POST', url: '/x' }) as (value: unknown) => {
    value?: unknown;
    error?: unknown;
  };
  return run(input);
}

describe('request validator', () => {
  it('fills body defaults without touching the parsed body it was given', () => {
    const schema = Type.Object({
      name: Type.String(),
      activate: Type.Optional(Type.Boolean({ default: true })),
    });
    const body = { name: 'a' };
    expect(validate(schema, 'body', body)).toEqual({ value: { name: 'a', activate: true } });
    expect(body).toEqual({ name: 'a' });
  });

  it('passes a body without defaults through as parsed, and still refuses a wrong one', () => {
    const schema = Type.Object({ message: Type.String() }, { additionalProperties: false });
    const body = { message: 'hi' };
    expect(validate(schema, 'body', body).value).toBe(body);
    expect(validate(schema, 'body', { message: 5 }).error).toBeDefined();
    expect(validate(schema, 'body', { message: 'hi', extra: 1 }).error).toBeDefined();
  });

  it('converts and defaults query strings', () => {
    const schema = Type.Object({
      limit: Type.Optional(Type.Integer({ default: 20 })),
      since: Type.Optional(Type.Integer()),
    });
    expect(validate(schema, 'querystring', { since: '5' })).toEqual({ value: { limit: 20, since: 5 } });
  });

  it('checks string-only params and headers as they are, and still refuses a wrong one', () => {
    const params = Type.Object({ id: Type.String({ format: 'uuid' }) });
    const input = { id: '00000000-0000-4000-8000-000000000000' };
    expect(validate(params, 'params', input).value).toBe(input);
    expect(validate(params, 'params', { id: 'not-a-uuid' }).error).toBeDefined();
    expect(validate(params, 'params', {}).error).toBeDefined();
    // A number in a path or a query is still converted from its string.
    expect(validate(Type.Object({ n: Type.Integer() }), 'params', { n: '7' })).toEqual({ value: { n: 7 } });
    expect(isObjectOfStrings(Type.Object({ a: Type.String(), b: Type.Optional(Type.String()) }))).toBe(true);
    expect(isObjectOfStrings(Type.Object({ a: Type.String(), n: Type.Integer() }))).toBe(false);
    expect(isObjectOfStrings(Type.Object({ a: Type.Union([Type.String(), Type.Number()]) }))).toBe(false);
  });

  it('finds a default at any depth', () => {
    expect(hasDefaults(Type.Object({ a: Type.String() }))).toBe(false);
    expect(
      hasDefaults(
        Type.Object({ items: Type.Array(Type.Object({ n: Type.Optional(Type.Integer({ default: 1 })) })) }),
      ),
    ).toBe(true);
    expect(hasDefaults(Type.Union([Type.String(), Type.Object({ x: Type.Number({ default: 0 }) })]))).toBe(
      true,
    );
  });
});
