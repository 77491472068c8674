import {
  CatalogInstallBody,
  CatalogInstallResult,
  CatalogSearchQuery,
  ErrorEnvelope,
  InstalledPackageList,
  PackageNameParams,
  RegistrySearchResult,
  RevocationOverrideBody,
  RevocationOverrideResult,
  TemplateList,
  TemplateSummary,
} from '@agent-platform/contracts';
import { can, Errors } from '@agent-platform/domain';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';

/**
 * The catalog (DECISIONS D5, docs/catalog.md) and the installed agent templates (spec: GET
 * /templates and /templates/{name}, action TemplateRead). Install and uninstall take SkillInstall
 * roles and are audited under `agents`; reads take TemplateRead.
 */
const TAGS = ['catalog'];
const Failures = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 500: ErrorEnvelope };
/** A registry that failed, is unreachable or too slow (spec §Errors: 502 upstream provider or registry error). */
const RegistryFailures = { ...Failures, 502: ErrorEnvelope };

export const catalogRoutes: RoutePlugin = (app, deps) => {
  app.post(
    '/catalog/install',
    {
      config: { action: 'SkillInstall', audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Install a package and its dependencies: from a local directory, by name from the registry, or a registry collection',
        body: CatalogInstallBody,
        response: { 201: CatalogInstallResult, ...RegistryFailures },
      },
    },
    async (request, reply) => {
      // An integration from a directory is IntegrationInstall's (admin; docs/integrations.md "Who may install").
      const installed = await deps.catalog.install({
        ...request.body,
        integrationsFromPath: can(request.caller.role, 'IntegrationInstall'),
      });
      return reply.code(201).send({ installed });
    },
  );

  app.get(
    '/catalog/installed',
    {
      config: { action: 'TemplateRead' },
      schema: {
        tags: TAGS,
        summary: 'Installed packages, sorted by name',
        response: { 200: InstalledPackageList },
      },
    },
    async () => ({ packages: await deps.catalog.installed() }),
  );

  app.delete(
    '/catalog/installed/:name',
    {
      config: { action: 'SkillInstall', audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Uninstall a package (409 while its agent is Running or another package needs it)',
        params: PackageNameParams,
        response: { 204: Type.Null({ description: 'Uninstalled.' }), ...Failures },
      },
    },
    async (request, reply) => {
      await deps.catalog.uninstall(request.params.name);
      return reply.code(204).send(null);
    },
  );

  // docs/catalog.md "Revocations": operators only (RevocationOverride), audited under `agents`
  // twice: the request, and the override with its reason (bodies are never audited).
  app.post(
    '/catalog/installed/:name/override-revocation',
    {
      config: { action: 'RevocationOverride', audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Allow a package the registry revoked to be installed and activated again (reactivates nothing)',
        params: PackageNameParams,
        body: RevocationOverrideBody,
        response: { 200: RevocationOverrideResult, ...Failures },
      },
    },
    async (request) => deps.revocations.override(request.params.name, request.body.reason, request.caller),
  );

  app.get(
    '/catalog/search',
    {
      config: { action: 'TemplateRead' },
      schema: {
        tags: TAGS,
        summary: "Search the registry of [catalog] registry_url: the registry's answer as it gave it",
        querystring: CatalogSearchQuery,
        response: { 200: RegistrySearchResult, 400: ErrorEnvelope, 502: ErrorEnvelope },
      },
    },
    async (request) => deps.catalog.search(request.query),
  );

  app.get(
    '/templates',
    {
      config: { action: 'TemplateRead' },
      schema: { tags: TAGS, summary: 'Installed agent templates', response: { 200: TemplateList } },
    },
    async () => ({ templates: await deps.catalog.templates() }),
  );

  app.get(
    '/templates/:name',
    {
      config: { action: 'TemplateRead' },
      schema: {
        tags: TAGS,
        summary: 'One installed agent template',
        params: PackageNameParams,
        response: { 200: TemplateSummary, 404: ErrorEnvelope },
      },
    },
    async (request) => {
      const template = (await deps.catalog.templates()).find((t) => t.name === request.params.name);
      if (template === undefined) throw Errors.notFound('template', request.params.name);
      return template;
    },
  );
};
