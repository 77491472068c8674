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
      (r) => r.framework && r.url !== '*' && r.action !== 'authenticated',
    );
    expect(docsWithoutAccess).toEqual([]);
  });

  it('makes only GET /health public (spec §Authentication rule 2), and the channel inbound route the peer signs (docs/channels.md)', () => {
    const publicRoutes = registeredRoutes(api.app)
      .filter((r) => r.action === 'public')
      .map((r) => `${r.method} ${r.url}`);
    expect([...new Set(publicRoutes)].sort()).toEqual([
      'GET /health',
      'HEAD /health',
      'POST /channels/:id/inbound',
    ]);
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

  it('serves Swagger UI at /docs behind authentication', async () => {
    expect((await api.request('GET', '/docs')).status).toBe(401);
    const res = await api.request('GET', '/docs/', { token: admin });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('swagger');
  });
});
