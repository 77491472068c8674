import type { PackageRegistry } from '@agent-platform/registry-core';
import { renderReadme } from './render-readme.ts';

/** A version's README, rendered and sanitised. */
export interface ReadmeHtml {
  name: string;
  version: string;
  html: string;
}

/** Rendered READMEs kept per process: a 256 KiB README renders in tens of milliseconds, a page view should not pay that each time. */
const CACHED = 64;

export interface ReadmePages {
  /** The README of `version` (null: of the version the package page shows), rendered; the package service's 400/404 otherwise. */
  html(name: string, version: string | null): Promise<ReadmeHtml>;
}

/**
 * Renders READMEs for the README routes and the web page, with a small cache by `name@version`:
 * a published version never changes, and neither does its README (docs/registry.md "README").
 */
export function createReadmePages(packages: Pick<PackageRegistry, 'readme'>): ReadmePages {
  const cache = new Map<string, string>();
  return {
    async html(name, version) {
      const readme = await packages.readme(name, version);
      const key = `${readme.name}@${readme.version}`;
      let html = cache.get(key);
      if (html === undefined) {
        html = renderReadme(readme.text);
        if (cache.size >= CACHED) cache.delete(cache.keys().next().value!);
      } else cache.delete(key);
      cache.set(key, html);
      return { name: readme.name, version: readme.version, html };
    },
  };
}

const shared = new WeakMap<object, ReadmePages>();

/** One renderer (and cache) per package service, shared by the routes and the web page. */
export function readmePagesFor(packages: Pick<PackageRegistry, 'readme'>): ReadmePages {
  let pages = shared.get(packages);
  if (pages === undefined) {
    pages = createReadmePages(packages);
    shared.set(packages, pages);
  }
  return pages;
}
