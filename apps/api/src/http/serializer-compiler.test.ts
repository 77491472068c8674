import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazySerializerFactory } from './serializer-compiler.ts';

function app() {
  return Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } } });
}

describe('the lazy response serializer', () => {
  it('serializes by the response schema, as the eager one does (undeclared fields dropped)', async () => {
    const server = app();
    server.get('/x', { schema: { response: { 200: { type: 'object', properties: { a: { type: 'string' }, n: { type: 'integer' } } } } } }, async () => ({ a: 'kept', n: 2, secret: 'dropped' }));
    const res = await server.inject({ method: 'GET', url: '/x' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"a":"kept","n":2}');
    await server.close();
  });

  it('builds a route\'s serializer at its first response, not at boot', async () => {
    const server = app();
    // A schema fast-json-stringify cannot build: an eager compiler refuses it in ready().
    server.get('/broken', { schema: { response: { 200: { $ref: 'nowhere#' } } } }, async () => ({}));
    server.get('/fine', async () => ({ ok: true }));
    await server.ready();
    expect((await server.inject({ method: 'GET', url: '/fine' })).statusCode).toBe(200);
    expect((await server.inject({ method: 'GET', url: '/broken' })).statusCode).toBe(500);
    await server.close();
  });
});
