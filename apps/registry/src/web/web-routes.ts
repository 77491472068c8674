import { readFile } from 'node:fs/promises';
import { toErrorReply } from '@agent-platform/api';
import { RegistryError } from '@agent-platform/registry-core';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { readmePagesFor } from '../readme/readme-html.ts';
import type { RegistryRoutePlugin } from '../routes/registry-route.ts';
import { searchIndexFor } from '../routes/registry-search-index.ts';
import { browseModel, packageModel } from './web-models.ts';
import { browsePage } from './browse-page.ts';
import type { Html } from './html.ts';
import { packagePage } from './package-page.ts';
import { ICON_PATH, problemPage, STYLESHEET_PATH, WEB_HEADERS, WEB_PATH } from './web-layout.ts';

/** Pages are not API: they stay out of the OpenAPI document. */
const PAGE = { hide: true } as const;

function sendPage(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').headers(WEB_HEADERS).send(page.value);
}

/**
 * The package service's refusals as pages: 400 for a bad name, 404 for an unknown package; any
 * other error goes on to the one error handler (a 500 with the usual envelope and a log line).
 */
async function orProblemPage(reply: FastifyReply, render: () => Promise<Html>): Promise<FastifyReply> {
  try {
    return sendPage(reply, await render());
  } catch (error) {
    if (!(error instanceof RegistryError)) throw error;
    if (error.category === 'NotFound') return sendPage(reply, problemPage('Not found', error.message), 404);
    if (error.category === 'ValidationError') return sendPage(reply, problemPage('Bad request', error.message), 400);
    throw error;
  }
}

/**
 * A page route's error handler: the auth hook's refusals (401 without a credential when reads
 * require one, 429 while locked out) as pages with the same status and headers, since a browser
 * shows JSON as text; anything else goes on to the one error handler (thrown to the parent).
 */
function refusalsAsPages(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const mapped = toErrorReply(error);
  if (mapped.status !== 401 && mapped.status !== 429) throw error;
  const page =
    mapped.status === 401
      ? problemPage(
          'Sign-in required',
          'This registry lets only callers with a credential read its packages ([registry.auth] read_requires_auth), and a browser has none to send here. Read them with a registry key or an access token: the HTTP API (GET /search, GET /packages/{name}) or agent-platform package info <name>.',
        )
      : problemPage('Too many attempts', mapped.body.error.message);
  void sendPage(reply.headers(mapped.headers), page, mapped.status);
}

/**
 * The registry's web page (docs/registry.md "Web page"): server-rendered HTML under /ui, no script,
 * a strict CSP. Pages have access `read`, like the package reads they show (with
 * `read_requires_auth` a browser without a credential gets the auth hook's 401, as a page); the
 * stylesheet and the redirect from `/` hold no data and are `public`.
 */
export const webRoutes: RegistryRoutePlugin = async (app, deps) => {
  const stylesheet = await readFile(new URL('./registry.css', import.meta.url), 'utf8');
  const icon = await readFile(new URL('./favicon.svg', import.meta.url), 'utf8');
  const search = searchIndexFor(deps);
  const readmes = readmePagesFor(deps.packages);

  for (const url of ['/', WEB_PATH])
    app.get(url, { config: { registryAccess: 'public' }, schema: PAGE }, async (_request, reply) => reply.redirect(`${WEB_PATH}/`));

  app.get(
    `${WEB_PATH}/`,
    {
      config: { registryAccess: 'read' },
      errorHandler: refusalsAsPages,
      schema: { ...PAGE, querystring: Type.Object({ q: Type.Optional(Type.String()), page: Type.Optional(Type.String()) }) },
    },
    async (request, reply) => {
      const { q = '', page = '1' } = request.query;
      if (q.length > 200) return sendPage(reply, problemPage('Bad request', 'a search is at most 200 characters'), 400);
      const number = /^[1-9]\d{0,5}$/.test(page) ? Number(page) : 1;
      return orProblemPage(reply, async () => browsePage(await browseModel(deps.packages, search, q.trim(), number)));
    },
  );

  app.get(
    `${WEB_PATH}/packages/:name`,
    { config: { registryAccess: 'read' }, errorHandler: refusalsAsPages, schema: { ...PAGE, params: Type.Object({ name: Type.String() }) } },
    async (request, reply) => orProblemPage(reply, async () => packagePage(await packageModel(deps.packages, readmes, request.params.name))),
  );

  // The two files of the page: built in, never a path on disk, so nothing else can be reached from here.
  for (const [path, type, body] of [
    [STYLESHEET_PATH, 'text/css; charset=utf-8', stylesheet],
    [ICON_PATH, 'image/svg+xml', icon],
  ] as const)
    app.get(path, { config: { registryAccess: 'public' }, schema: PAGE }, async (_request, reply) =>
      reply.type(type).headers({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' }).send(body),
    );

  app.get(`${WEB_PATH}/*`, { config: { registryAccess: 'read' }, errorHandler: refusalsAsPages, schema: PAGE }, async (_request, reply) =>
    sendPage(reply, problemPage('Not found', 'There is no such page.'), 404),
  );
};
