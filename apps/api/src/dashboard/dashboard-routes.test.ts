import { AUDIT_CATEGORIES } from '@agent-platform/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

/** The CSP every dashboard response carries (docs/dashboard.md "Security"). */
const STRICT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

describe('the dashboard is off by default (spec "Rules of the model" 2)', () => {
  it('answers 404 at /dashboard with the default config (auth disabled on loopback)', async () => {
    const api = await startTestApi();
    try {
      expect(api.deps.config.current().surfaces.dashboard).toBe(false);
      for (const path of ['/dashboard', '/dashboard/', '/dashboard/config.json', '/dashboard/agents']) {
        const res = await api.request('GET', path);
        expect(res.status, path).toBe(404);
        expect(res.body.error.category).toBe('NotFound');
      }
    } finally {
      await api.close();
    }
  });

  it('is an unknown path like any other with auth on: 401 without a credential, 404 with one', async () => {
    const api = await startTestApi({ config: { auth: { mode: 'local' } } });
    try {
      expect((await api.request('GET', '/dashboard/')).status).toBe(401);
      expect((await api.request('GET', '/dashboard/', { token: await api.issueKey('admin') })).status).toBe(
        404,
      );
    } finally {
      await api.close();
    }
  });
});

describe('with [surfaces] dashboard = true', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ config: { auth: { mode: 'local' }, surfaces: { dashboard: true } } });
  });
  afterAll(async () => api?.close());

  it('serves the page without a credential at /dashboard and every path under it, with the strict CSP and security headers', async () => {
    for (const path of [
      '/dashboard',
      '/dashboard/',
      '/dashboard/agents',
      '/dashboard/runs/5d0f6e0c-0000-4000-8000-000000000000',
      '/dashboard/callback?code=x&state=y',
    ]) {
      const res = await api.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(STRICT_CSP);
      expect(res.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
      });
      expect(res.body).toContain('<div id="app"></div>');
    }
  });

  it('has no inline script or style, and loads only hashed same-origin assets that exist', async () => {
    const html: string = (await api.request('GET', '/dashboard/')).body;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(3);
    for (const asset of assets) {
      expect(asset).toMatch(/^\/dashboard\/assets\/(main|icon)-[A-Za-z0-9]+\.(js|css|svg)$/);
      const res = await api.request('GET', asset);
      expect(res.status, asset).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['content-security-policy']).toBe(STRICT_CSP);
    }
    const script = assets.find((a) => a.endsWith('.js'))!;
    expect((await api.request('GET', script)).headers['content-type']).toBe('text/javascript; charset=utf-8');
  });

  it('answers 404 for an asset that was not built, whatever the name (no path reaches the disk)', async () => {
    for (const path of [
      '/dashboard/assets/nope.js',
      '/dashboard/assets/..%2F..%2Fpackage.json',
      '/dashboard/assets/%2E%2E%2Findex.html',
    ]) {
      const res = await api.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.error.category).toBe('NotFound');
    }
  });

  it('gives the page its settings: the auth mode, whether keys work, no provider sign-in, the permission matrix', async () => {
    const res = await api.request('GET', '/dashboard/config.json');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({
      version: api.deps.version,
      auth_mode: 'local',
      api_keys: true,
      oidc: null,
    });
    expect(res.body.permissions.AgentStop).toEqual(['admin', 'operator']);
    expect(res.body.permissions.ComplianceRead).toEqual(['admin', 'auditor']);
    // The audit page filters on the api's own categories, the newer ones included.
    expect(res.body.audit_categories).toEqual([...AUDIT_CATEGORIES]);
    expect(res.body.audit_categories).toEqual(expect.arrayContaining(['privacy', 'compliance', 'retention']));
  });

  it('keeps every api route behind authentication: the page gets no data without a token', async () => {
    expect((await api.request('GET', '/agents')).status).toBe(401);
    // A dot segment is not resolved into another route: it is a page path like any other.
    const dotted = await api.request('GET', '/dashboard/../agents');
    expect(dotted.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(dotted.body).not.toContain('"agents"');
  });

  it('records no audit entry for page loads', async () => {
    const before = await api.deps.audit.count();
    await api.request('GET', '/dashboard/');
    await api.request('GET', '/dashboard/config.json');
    expect(await api.deps.audit.count()).toBe(before);
  });
});

describe('provider sign-in settings', () => {
  it('offers the OIDC client in mode oidc and lets the page reach the issuer (and the extra origins) in connect-src only', async () => {
    const api = await startTestApi({
      config: {
        surfaces: { dashboard: true },
        auth: {
          mode: 'oidc',
          allow_local_service_keys: true,
          oidc: {
            issuer: 'https://idp.example.com/realms/agents',
            audience: 'https://agents.example.com',
            role_claim: 'roles',
          },
        },
        dashboard: {
          oidc_client_id: 'agent-dashboard',
          oidc_scopes: ['openid', 'profile'],
          oidc_resource: 'https://agents.example.com',
          connect_origins: ['https://tokens.example.com'],
        },
      },
      listen: false,
    });
    try {
      const settings = await api.request('GET', '/dashboard/config.json');
      expect(settings.body).toMatchObject({
        auth_mode: 'oidc',
        api_keys: true,
        oidc: {
          issuer: 'https://idp.example.com/realms/agents',
          client_id: 'agent-dashboard',
          scopes: ['openid', 'profile'],
          resource: 'https://agents.example.com',
        },
      });
      const csp = (await api.request('GET', '/dashboard/')).headers['content-security-policy'];
      expect(csp).toContain("connect-src 'self' https://idp.example.com https://tokens.example.com;");
      expect(csp).toContain("script-src 'self';");
    } finally {
      await api.close();
    }
  });

  it('offers no provider sign-in without a client id, nor outside mode oidc', async () => {
    const api = await startTestApi({
      config: { surfaces: { dashboard: true }, dashboard: { oidc_client_id: 'agent-dashboard' } },
      listen: false,
    });
    try {
      expect((await api.request('GET', '/dashboard/config.json')).body).toMatchObject({
        auth_mode: 'disabled',
        api_keys: false,
        oidc: null,
      });
      expect((await api.request('GET', '/dashboard/')).headers['content-security-policy']).toBe(STRICT_CSP);
    } finally {
      await api.close();
    }
  });
});
