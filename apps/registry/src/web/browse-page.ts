import type { RegistryPackage, RegistrySearchResult } from '@agent-platform/contracts';
import { html, type Html } from './html.ts';
import { layout, packageUrl, searchUrl } from './web-layout.ts';

/** What the browse page shows: a page of search hits, each with its package's deprecation. */
export interface BrowseModel {
  query: string;
  result: RegistrySearchResult;
  /** The deprecation message of each hit that is deprecated, by name. */
  deprecated: ReadonlyMap<string, string>;
}

/** `/ui/`: the search box's results (every package by name when the query is empty), paged. */
export function browsePage(model: BrowseModel): Html {
  const { query, result } = model;
  const pages = Math.max(1, Math.ceil(result.total / result.per_page));
  const heading = query === '' ? 'All packages' : `Results for “${query}”`;
  const hits = result.results.map((hit) => {
    const deprecated = model.deprecated.get(hit.name);
    return html`<li>
<a class="name" href="${packageUrl(hit.name)}">${hit.name}</a>
<span class="badge">${hit.type}</span>
<span class="badge" title="latest version">${hit.latest}</span>
${deprecated === undefined ? null : html`<span class="badge warn" title="${deprecated}">deprecated</span>`}
<div>${hit.title}</div>
<div class="muted">${hit.description}</div>
</li>`;
  });
  const body = html`<h1>${heading}</h1>
<p class="muted" aria-live="polite">${result.total} ${result.total === 1 ? 'package' : 'packages'}${pages > 1 ? `, page ${result.page} of ${pages}` : ''}</p>
${result.results.length === 0 ? html`<p>No package matches.</p>` : html`<ul class="results">${hits}</ul>`}
${pages > 1 ? paging(query, result.page, pages) : null}`;
  return layout(heading, body, query);
}

function paging(query: string, page: number, pages: number): Html {
  return html`<nav class="paging" aria-label="Pages">
${page > 1 ? html`<a rel="prev" href="${searchUrl(query, page - 1)}">Previous page</a>` : null}
${page < pages ? html`<a rel="next" href="${searchUrl(query, page + 1)}">Next page</a>` : null}
</nav>`;
}

/** The deprecation messages of the packages of a page of hits. */
export function deprecationsOf(packages: readonly RegistryPackage[]): Map<string, string> {
  return new Map(packages.flatMap((p) => (p.deprecated ? [[p.name, p.deprecated.message] as const] : [])));
}
