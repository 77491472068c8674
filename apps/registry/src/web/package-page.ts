import type { RegistryDownloads, RegistryPackage, RegistryVersion, Revocation } from '@agent-platform/contracts';
import { html, httpUrl, trustedHtml, type Html } from './html.ts';
import { installLines } from './install-lines.ts';
import { layout } from './web-layout.ts';
import { provenanceOf, versionState } from './version-state.ts';

/** Everything the package page shows, read through the package service (web-routes.ts). */
export interface PackageModel {
  pkg: RegistryPackage;
  /** Every version, highest first. */
  versions: readonly RegistryVersion[];
  downloads: RegistryDownloads;
  revocations: readonly Revocation[];
  /** The sanitised README of the shown version, or null when it has none. */
  readme: { version: string; html: string } | null;
}

/** `/ui/packages/{name}` (docs/registry.md "Web page"). */
export function packagePage(model: PackageModel): Html {
  const { pkg } = model;
  const body = html`<h1>${pkg.name} <span class="badge">${pkg.type}</span>${pkg.latest === null ? null : html` <span class="badge" title="latest version">${pkg.latest}</span>`}</h1>
<p><strong>${pkg.title}</strong></p>
<p>${pkg.description}</p>
${pkg.deprecated ? html`<div class="banner" role="note" aria-label="Deprecated"><strong>Deprecated.</strong> ${pkg.deprecated.message} <span class="muted">(${pkg.deprecated.deprecated_by}, ${pkg.deprecated.deprecated_at})</span></div>` : null}
<div class="layout">
<div>
${installSection(pkg)}
<section class="card readme" aria-label="README">
${model.readme === null ? html`<p class="muted">This package has no README.</p>` : trustedHtml(model.readme.html)}
</section>
${versionsSection(model)}
</div>
${aside(model)}
</div>`;
  return layout(pkg.name, body);
}

function installSection(pkg: RegistryPackage): Html {
  const lines = installLines(pkg);
  if (lines === null)
    return html`<section class="card" aria-labelledby="install"><h2 id="install">Install</h2><p>Every version is yanked: nothing is picked by a version constraint. A yanked version still installs by its exact version (<code>"=1.0.0"</code>).</p></section>`;
  return html`<section class="card" aria-labelledby="install"><h2 id="install">Install</h2>
<p>On a platform whose <code>[catalog] registry_url</code> is this registry (<code>$AP</code>: the platform's address, <code>$AP_KEY</code>: an API key that may install):</p>
<pre aria-label="Install request"><code>${lines.request}</code></pre>
<pre aria-label="Install with curl"><code>${lines.curl}</code></pre>
</section>`;
}

function versionsSection(model: PackageModel): Html {
  const downloads = new Map(model.downloads.versions.map((v) => [v.version, v.downloads]));
  const tags = new Map<string, string[]>();
  for (const [tag, version] of Object.entries(model.pkg.dist_tags ?? {})) tags.set(version, [...(tags.get(version) ?? []), tag]);
  const rows = model.versions.map((v) => {
    const state = versionState(v, model.revocations);
    const provenance = provenanceOf(v);
    return html`<tr class="${v.yanked ? 'yanked' : 'listed'}" data-version="${v.version}">
<td>${v.version}${(tags.get(v.version) ?? []).map((t) => html` <span class="badge">${t}</span>`)}</td>
<td>${state.map((s) => html`<span class="badge ${s.tone}" title="${s.detail}">${s.label}</span> `)}${state.length === 0 ? 'listed' : null}</td>
<td>${v.published_at}<br><span class="muted">by ${v.published_by}</span>${provenance === null ? null : html`<br><span class="provenance">${provenance}</span>`}</td>
<td>${downloads.get(v.version) ?? 0}</td>
</tr>`;
  });
  return html`<section class="card" aria-labelledby="versions"><h2 id="versions">Versions</h2>
<table>
<thead><tr><th scope="col">Version</th><th scope="col">State</th><th scope="col">Published</th><th scope="col">Downloads</th></tr></thead>
<tbody>${rows}</tbody>
</table>
</section>`;
}

function aside(model: PackageModel): Html {
  const { pkg, downloads } = model;
  const link = (url: string | undefined): Html | null => {
    const safe = httpUrl(url);
    return safe === null ? null : html`<a href="${safe}" rel="nofollow noopener">${safe}</a>`;
  };
  const list = (items: readonly string[]): Html => (items.length === 0 ? html`<span class="muted">none</span>` : html`${items.join(', ')}`);
  const repository = link(pkg.repository);
  const homepage = link(pkg.homepage);
  return html`<aside class="card" aria-label="About this package"><dl>
<dt>Latest</dt><dd>${pkg.latest ?? html`<span class="muted">none (every version is yanked)</span>`}</dd>
<dt>Dist-tags</dt><dd><ul class="tags">${Object.entries(pkg.dist_tags ?? {}).map(([tag, version]) => html`<li>${tag}: ${version}</li>`)}</ul></dd>
<dt>Downloads</dt><dd data-downloads-total="${downloads.total}">${downloads.total} in total</dd>
<dt>Licence</dt><dd>${pkg.license ?? ''}</dd>
${repository === null ? null : html`<dt>Repository</dt><dd>${repository}</dd>`}
${homepage === null ? null : html`<dt>Homepage</dt><dd>${homepage}</dd>`}
<dt>Keywords</dt><dd>${list(pkg.keywords)}</dd>
<dt>Categories</dt><dd>${list(pkg.categories)}</dd>
<dt>Regions</dt><dd>${pkg.regions.length === 0 ? 'all' : pkg.regions.join(', ')}</dd>
<dt>Owners</dt><dd><ul class="owners">${pkg.owners.map((o) => html`<li>${o}</li>`)}</ul></dd>
<dt>Published</dt><dd>first ${pkg.created_at}, last change ${pkg.updated_at}</dd>
</dl></aside>`;
}
