import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from './route-catalog.ts';
import { startTestApi, type TestApi } from '../testing/index.ts';

let api: TestApi;
let admin: string;
beforeAll(async () => {
  api = await startTestApi({ config: { auth: { mode: 'local' } } });
  admin = await api.issueKey('admin');
});
afterAll(async () => api.close());

describe('every route declares itself', () => {
  it('has an access rule and response schemas (framework assets: an access rule)', () => {
    const routes = registeredRoutes(api.app);
    expect(routes.length).toBeGreaterThan(10);
    const ours = routes.filter((r) => !r.framework);
    const incomplete = ours
      .filter((r) => r.action === undefined || !r.hasResponseSchema)
      .map((r) => `${r.method} ${r.url}`);
    expect(incomplete).toEqual([]);
    const docsWithoutAccess = routes.filter(
      (r) => r.framework && r.url !== '*' && r.action !== 'public',
    );
    expect(docsWithoutAccess).toEqual([]);
  });

  it('has response schemas the serializer can build, every status of every route (they are built by the first response, serializer-compiler.ts)', () => {
    const build = SerializerSelector()(api.app.getSchemas(), {});
    const broken: string[] = [];
    let built = 0;
    for (const route of registeredRoutes(api.app)) {
      for (const [httpStatus, declared] of Object.entries(route.response ?? {})) {
        const content = (declared as { content?: Record<string, { schema: unknown }> }).content;
        const schemas = content === undefined ? [declared] : Object.values(content).map((c) => c.schema);
        for (const schema of schemas) {
          try {
            build({ schema, method: route.method, url: route.url, httpStatus });
            built += 1;
          } catch (error) {
            broken.push(`${route.method} ${route.url} ${httpStatus}: ${(error as Error).message}`);
          }
        }
      }
    }
    expect(broken).toEqual([]);
    expect(built).toBeGreaterThan(300);
  });

  it('makes public only GET /health (spec §Authentication rule 2), the channel inbound route the peer signs (docs/channels.md), the favicon and the Swagger UI pages (docs/http.md)', () => {
    const publicRoutes = registeredRoutes(api.app)
      .filter((r) => r.action === 'public')
      .map((r) => `${r.method} ${r.url}`)
      .filter((route) => !/^[A-Z,]+ \/docs(\/|$)/.test(route));
    expect([...new Set(publicRoutes)].sort()).toEqual([
      'GET /favicon.ico',
      'GET /health',
      'HEAD /favicon.ico',
      'HEAD /health',
      'POST /channels/:id/inbound',
    ]);
    const docs = registeredRoutes(api.app).filter((r) => r.url === '/docs' || r.url.startsWith('/docs/'));
    expect(docs.every((r) => r.action === 'public' && /^(GET|HEAD)/.test(r.method))).toBe(true);
  });
});

describe('OpenAPI and Swagger UI', () => {
  it('serves an OpenAPI 3.1 document listing the routes, to authenticated callers', async () => {
    expect((await api.request('GET', '/openapi.json')).status).toBe(401);
    const res = await api.request('GET', '/openapi.json', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe(api.deps.version);
    expect(res.body.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/health', '/metrics', '/config/reload', '/logs']),
    );
    expect(res.body.paths['/health'].get.security).toEqual([]);
  });

  it('marks a parameter with a default as optional: the validator fills it in, so clients need not send it', async () => {
    const doc = (await api.request('GET', '/openapi.json', { token: admin })).body;
    const limit = doc.paths['/security/audit'].get.parameters.find(
      (p: { name: string }) => p.name === 'limit',
    );
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { default: 20 } });
    // Still accepted without it, with the default applied.
    expect((await api.request('GET', '/security/audit', { token: admin })).status).toBe(200);
    const id = doc.paths['/agents/{id}'].get.parameters.find((p: { name: string }) => p.name === 'id');
    expect(id).toMatchObject({ in: 'path', required: true });
  });

  it('serves Swagger UI at /docs and the document it shows without a key; the API it describes keeps its credential', async () => {
    const page = await api.request('GET', '/docs/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('swagger');
    const initializer = await api.request('GET', '/docs/static/swagger-initializer.js');
    expect(initializer.status).toBe(200);
    const document = await api.request('GET', '/docs/json');
    expect(document.status).toBe(200);
    expect(document.body.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    expect(document.body.security).toEqual([{ bearer: [] }]);
    expect((await api.request('GET', '/openapi.json')).status).toBe(401);
    expect((await api.request('GET', '/agents')).status).toBe(401);
    expect((await api.request('POST', '/docs/json')).status).toBe(401);
  });

  it("answers a browser's automatic /favicon.ico with 204, without auditing a failed authentication", async () => {
    for (let i = 0; i < 3; i++) expect((await api.request('GET', '/favicon.ico')).status).toBe(204);
    // The same browser without a key on an API route: that one is a failed authentication.
    expect((await api.request('GET', '/agents?from=favicon-test')).status).toBe(401);
    const entries = (await api.request('GET', '/security/audit?limit=100', { token: admin })).body.entries as Array<{ target: string; result: string }>;
    expect(entries.filter((e) => e.target === '/favicon.ico')).toEqual([]);
    expect(entries.filter((e) => e.target.startsWith('/agents') && e.result === 'failure').length).toBeGreaterThanOrEqual(1);
  });
});
