import { ErrorEnvelope, RegistryPackageParams, RegistryVersionParams } from '@agent-platform/contracts';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { readmePagesFor, type ReadmeHtml } from '../readme/readme-html.ts';
import type { RegistryRoutePlugin } from './registry-route.ts';

const Failures = { 400: ErrorEnvelope, 404: ErrorEnvelope };
const Fragment = {
  description:
    'The README.md of the version, rendered from Markdown and sanitised (docs/registry.md "README"): an HTML fragment, no <html> or <body>. Header x-readme-version names the version.',
  content: { 'text/html': { schema: Type.String() } },
};

/**
 * A fragment opened on its own is a page of the registry's origin: it gets a policy that runs
 * nothing and loads nothing but images, on top of the sanitiser (defence in depth).
 */
const FRAGMENT_CSP = "default-src 'none'; img-src http: https:; style-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox";

function sendFragment(reply: FastifyReply, readme: ReadmeHtml): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .headers({ 'content-security-policy': FRAGMENT_CSP, 'x-content-type-options': 'nosniff', 'x-readme-version': readme.version })
    .send(readme.html);
}

/**
 * `GET /packages/{name}/readme` (of the version the package page shows: `latest`, or the highest
 * when every version is yanked) and `GET /packages/{name}/{version}/readme`: access `read`, like
 * every package read. 404 `NotFound` with `details.kind` `readme` for a version without one.
 */
export const readmeRoutes: RegistryRoutePlugin = (app, deps) => {
  const readmes = readmePagesFor(deps.packages);
  app.get(
    '/packages/:name/readme',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: ['packages'],
        summary: "The README of the package's latest version, rendered and sanitised (HTML fragment)",
        params: RegistryPackageParams,
        response: { 200: Fragment, ...Failures },
      },
    },
    async (request, reply) => sendFragment(reply, await readmes.html(request.params.name, null)),
  );

  app.get(
    '/packages/:name/:version/readme',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: ['packages'],
        summary: 'The README of one exact version, rendered and sanitised (HTML fragment)',
        params: RegistryVersionParams,
        response: { 200: Fragment, ...Failures },
      },
    },
    async (request, reply) => sendFragment(reply, await readmes.html(request.params.name, request.params.version)),
  );
};
