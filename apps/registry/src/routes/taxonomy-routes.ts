import { RegionList, Taxonomy, TaxonomyVersion } from '@agent-platform/contracts';
import { BUILT_IN_TAXONOMY, regionList } from '@agent-platform/registry-core';
import type { RegistryRoutePlugin } from './registry-route.ts';

/**
 * The registry's vocabularies (docs/registry-search.md "Taxonomy", "Regions"): what a package's
 * `categories` and `regions` may name. Public: no identity is ever needed to read them.
 */
export const taxonomyRoutes: RegistryRoutePlugin = (app) => {
  const publicRoute = { registryAccess: 'public' } as const;
  app.get(
    '/taxonomy',
    { config: publicRoute, schema: { tags: ['taxonomy'], summary: 'The category taxonomy, sorted by path, with its version', response: { 200: Taxonomy } } },
    async () => BUILT_IN_TAXONOMY,
  );
  app.get(
    '/taxonomy/version',
    {
      config: publicRoute,
      schema: { tags: ['taxonomy'], summary: "The taxonomy's version: changes whenever the category list does", response: { 200: TaxonomyVersion } },
    },
    async () => ({ version: BUILT_IN_TAXONOMY.version }),
  );
  app.get(
    '/regions',
    {
      config: publicRoute,
      schema: { tags: ['taxonomy'], summary: 'Every ISO 3166-1 alpha-2 code with its English name, sorted by code', response: { 200: RegionList } },
    },
    async () => regionList(),
  );
};
