import { ErrorEnvelope, RegistryDependents, RegistryPackageParams, RegistrySearchQuery, RegistrySearchResult } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import { normalizeSearchQuery } from '@agent-platform/registry-core';
import type { RegistryRoutePlugin } from './registry-route.ts';
import { searchIndexFor } from './registry-search-index.ts';

/**
 * GET /search (docs/registry-search.md "Search"): the latest listed version of each package,
 * ranked by `q` and narrowed by the filters. The index lives in this process and is changed in
 * place by what the registry's history says changed (search-index.ts), so a package published
 * through another registry process over the same store is found on the next query.
 */
export const searchRoutes: RegistryRoutePlugin = (app, deps) => {
  const index = searchIndexFor(deps);
  app.get(
    '/search',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: ['search'],
        summary: 'Search packages by text, type, category, region and keyword; ranked and paginated',
        querystring: RegistrySearchQuery,
        response: { 200: RegistrySearchResult, 400: ErrorEnvelope },
      },
    },
    async (request) => {
      const normalized = normalizeSearchQuery(request.query);
      if ('problem' in normalized) throw Errors.validation(normalized.problem, { field: 'region' });
      return index.search(normalized.request);
    },
  );

  app.get(
    '/packages/:name/dependents',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: ['packages'],
        summary: 'Reverse dependencies: the packages whose latest listed version depends on this one',
        params: RegistryPackageParams,
        response: { 200: RegistryDependents, 400: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (request) => {
      // 400 for a bad name, 404 for an unknown package, as every /packages/{name} route.
      await deps.packages.getPackage(request.params.name);
      return { name: request.params.name, dependents: await index.dependents(request.params.name) };
    },
  );
};
