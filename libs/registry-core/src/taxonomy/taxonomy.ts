import { createHash } from 'node:crypto';
import type { Taxonomy } from '@agent-platform/contracts';
import { INSURANCE_TAXONOMY, type Category } from './insurance-taxonomy.ts';

const PATH = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\/[a-z0-9]+(?:-[a-z0-9]+)*)*$/;

/**
 * A taxonomy from a list of categories, sorted by path, with its `version`: a digest of the
 * sorted content, so that it changes exactly when a path, title or description does (a client
 * caches GET /taxonomy and polls GET /taxonomy/version). Throws on a list that breaks the
 * taxonomy's own rules (a malformed or repeated path, a path whose parent is missing): those are
 * programming errors in the built-in list, caught by its test.
 */
export function createTaxonomy(categories: readonly Category[]): Taxonomy {
  const sorted = [...categories].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const paths = new Set<string>();
  for (const { path } of sorted) {
    if (!PATH.test(path)) throw new Error(`taxonomy path '${path}' is not lower-case words joined by '/'`);
    if (paths.has(path)) throw new Error(`taxonomy path '${path}' is listed twice`);
    const parent = parentOf(path);
    if (parent !== null && !paths.has(parent)) throw new Error(`taxonomy path '${path}' has no parent '${parent}'`);
    paths.add(path);
  }
  const canonical = JSON.stringify(sorted.map(({ path, title, description }) => [path, title, description]));
  const version = `sha256:${createHash('sha256').update(canonical).digest('hex').slice(0, 16)}`;
  return { version, categories: sorted.map(({ path, title, description }) => ({ path, title, description })) };
}

function parentOf(path: string): string | null {
  const cut = path.lastIndexOf('/');
  return cut === -1 ? null : path.slice(0, cut);
}

/** The registry's taxonomy (GET /taxonomy). */
export const BUILT_IN_TAXONOMY: Taxonomy = createTaxonomy(INSURANCE_TAXONOMY);

const BUILT_IN_PATHS: ReadonlySet<string> = new Set(BUILT_IN_TAXONOMY.categories.map((c) => c.path));

/**
 * The paths of `paths` the taxonomy does not list, in input order without repeats: the publish
 * path refuses a package (and a collection) naming any. Paths compare exactly: the taxonomy's
 * are lower case, and so must a manifest's be.
 */
export function unknownCategories(paths: readonly string[], taxonomy: Taxonomy = BUILT_IN_TAXONOMY): string[] {
  const known = taxonomy === BUILT_IN_TAXONOMY ? BUILT_IN_PATHS : new Set(taxonomy.categories.map((c) => c.path));
  return [...new Set(paths)].filter((path) => !known.has(path));
}
