import type { PackageRegistry, SearchIndex } from '@agent-platform/registry-core';
import { normalizeSearchQuery, RegistryError } from '@agent-platform/registry-core';
import type { ReadmePages } from '../readme/readme-html.ts';
import { deprecationsOf, type BrowseModel } from './browse-page.ts';
import type { PackageModel } from './package-page.ts';

/** Hits per page of the browse page. */
export const PER_PAGE = 20;

/** A page of search hits (the same index and normalisation as GET /search), with each hit's deprecation. */
export async function browseModel(packages: PackageRegistry, search: SearchIndex, query: string, page: number): Promise<BrowseModel> {
  const normalized = normalizeSearchQuery({ q: query, page, per_page: PER_PAGE });
  // Only a region can be refused, and the page sends none.
  if ('problem' in normalized) throw new RegistryError('ValidationError', normalized.problem);
  const result = await search.search(normalized.request);
  // A hit whose package went away between the index and this read simply has no mark.
  const found = await Promise.all(result.results.map((hit) => packages.getPackage(hit.name).catch(unlessNotFound)));
  return { query, result, deprecated: deprecationsOf(found.filter((p) => p !== null)) };
}

/** Everything the package page shows, read in parallel; 400/404 from the package service as they come. */
export async function packageModel(packages: PackageRegistry, readmes: ReadmePages, name: string): Promise<PackageModel> {
  const pkg = await packages.getPackage(name);
  const [versions, downloads, revocations, readme] = await Promise.all([
    packages.listVersions(name),
    packages.downloads(name),
    packages.packageRevocations(name),
    readmes.html(name, null).catch(unlessNotFound),
  ]);
  return { pkg, versions: versions.versions, downloads, revocations, readme };
}

/** Null for a NotFound of the package service (a README that does not exist); any other error goes on. */
function unlessNotFound(error: unknown): null {
  if (error instanceof RegistryError && error.category === 'NotFound') return null;
  throw error;
}
