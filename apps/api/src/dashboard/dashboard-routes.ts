import { DashboardSettings } from '@agent-platform/contracts';
import { DASHBOARD_PATH, loadDashboardBundle, type DashboardBundle } from '@agent-platform/dashboard';
import { Errors } from '@agent-platform/domain';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';
import { DASHBOARD_HEADERS, dashboardCsp } from './dashboard-headers.ts';
import { dashboardSettings } from './dashboard-settings.ts';

const TAGS = ['dashboard'];
/**
 * The page, its assets and its settings are public: they hold no data, and a browser cannot
 * send a bearer token when it navigates. Everything the page shows comes from the api's own
 * routes, called with the signed-in token under their usual role checks. GETs are never audited.
 */
const PUBLIC = { action: 'public' } as const;
const Page = Type.String({
  description: 'The dashboard page (text/html), the same for every path under /dashboard.',
});

/**
 * The dashboard surface (`[surfaces] dashboard = true`, spec "Rules of the model" 2,
 * docs/dashboard.md): one page at /dashboard and every path under it (the page routes itself),
 * its hashed assets, and its settings. Not registered at all when the surface is off, so
 * /dashboard is then an unknown path like any other: 404 (after authentication: 401 without a
 * credential in modes local and oidc, spec §Authentication rule 1). Surfaces are read at boot.
 */
export const dashboardRoutes: RoutePlugin = async (app, deps) => {
  if (!deps.config.current().surfaces.dashboard) return;
  const bundle = await loadDashboardBundle();
  const page = (reply: FastifyReply): FastifyReply =>
    secure(reply, deps)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send(bundle.html);

  for (const url of [DASHBOARD_PATH, `${DASHBOARD_PATH}/`, `${DASHBOARD_PATH}/*`]) {
    app.get(
      url,
      { config: PUBLIC, schema: { tags: TAGS, summary: 'The dashboard (HTML)', response: { 200: Page } } },
      async (_request, reply) => page(reply),
    );
  }

  app.get(
    `${DASHBOARD_PATH}/config.json`,
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: 'What the dashboard needs before sign-in: auth mode, provider sign-in, permission matrix',
        response: { 200: DashboardSettings },
      },
    },
    async (_request, reply) =>
      secure(reply, deps)
        .header('cache-control', 'no-store')
        .send(dashboardSettings(deps.config.current(), deps.version)),
  );

  app.get(
    `${DASHBOARD_PATH}/assets/:file`,
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: 'A dashboard asset (script, stylesheet, icon); names carry a content hash',
        params: Type.Object({ file: Type.String() }),
        response: { 200: Type.String({ description: 'The file.' }) },
      },
    },
    async (request, reply) => sendAsset(bundle, request.params.file, secure(reply, deps)),
  );
};

function sendAsset(bundle: DashboardBundle, name: string, reply: FastifyReply): FastifyReply {
  // A lookup in the built set, never a path on disk: nothing else can be reached from here.
  const asset = bundle.assets.get(name);
  if (asset === undefined) throw Errors.notFound('dashboard asset', name);
  return reply
    .type(asset.contentType)
    .header('cache-control', 'public, max-age=31536000, immutable')
    .send(asset.body);
}

/** The CSP (read per request: a reload may change the issuer) and the other security headers. */
function secure(reply: FastifyReply, deps: ApiDeps): FastifyReply {
  return reply
    .header('content-security-policy', dashboardCsp(deps.config.current()))
    .headers(DASHBOARD_HEADERS);
}
