import type { RouteOptions } from 'fastify';
import type { ApiApp } from '../api-app.ts';

export interface RouteRecord {
  method: string;
  url: string;
  action: string | undefined;
  hasResponseSchema: boolean;
  /** Registered by a framework plugin (Swagger UI assets, CORS preflight), not by our code. */
  framework: boolean;
  /** The request schemas (JSON Schema, from TypeBox), for tests that generate requests (the fuzz pass). */
  request: { body?: unknown; querystring?: unknown; params?: unknown };
  /** The response schemas by status, as declared (the test that builds every serializer reads them). */
  response?: Record<string, unknown>;
  /** Path params that must be UUIDs, with the id kind (`RouteAccess.ids`). */
  ids: Record<string, string>;
}

const catalogs = new WeakMap<object, RouteRecord[]>();

/**
 * Prefix of the Swagger UI routes: the page, its assets and the document it shows are public, so
 * that a browser can open it and the user enter a key with its Authorize button (docs/http.md
 * "OpenAPI and Swagger UI"). They serve documentation only; every route they describe keeps its
 * credential (spec §Authentication), and GET /openapi.json stays authenticated.
 */
export const DOCS_PREFIX = '/docs';

/**
 * Records every route as it is registered (the completeness test walks this list) and gives the
 * framework-owned Swagger UI routes their access rule: `public` (see DOCS_PREFIX). Must be
 * installed before any route is registered.
 */
export function trackRoutes(app: ApiApp): void {
  const records: RouteRecord[] = [];
  catalogs.set(app, records);
  app.addHook('onRoute', (route: RouteOptions) => {
    const isDocs = route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`);
    if (isDocs) route.config = { ...route.config, action: 'public' };
    const isPreflight = route.method === 'OPTIONS' && route.url === '*';
    const config = route.config as { action?: string; ids?: Record<string, string> } | undefined;
    const schema = route.schema;
    records.push({
      method: Array.isArray(route.method) ? route.method.join(',') : String(route.method),
      url: route.url,
      action: config?.action,
      hasResponseSchema: route.schema?.response !== undefined,
      framework: isDocs || isPreflight,
      request: { body: schema?.body, querystring: schema?.querystring, params: schema?.params },
      ...(schema?.response === undefined ? {} : { response: schema.response as Record<string, unknown> }),
      ids: config?.ids ?? {},
    });
  });
}

export function registeredRoutes(app: ApiApp): readonly RouteRecord[] {
  return catalogs.get(app) ?? [];
}
