import { html, type Html } from './html.ts';

/** Where the web page lives: every page and its stylesheet are under it (`/` redirects here). */
export const WEB_PATH = '/ui';
/** The stylesheet's URL: a file of this app, served with the pages (no inline style: the CSP refuses it). */
export const STYLESHEET_PATH = `${WEB_PATH}/assets/registry.css`;
/** Named by every page, so a browser never asks for /favicon.ico (a 404 in its console). */
export const ICON_PATH = `${WEB_PATH}/assets/favicon.svg`;

/**
 * The Content-Security-Policy of every page (docs/registry.md "Web page"): no script at all (the
 * pages are plain HTML and a form), styles from this origin only (no inline style, so none from a
 * README either), images from this origin and from http(s) URLs a README names, nothing framed,
 * forms posting back here only.
 */
export const WEB_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' http: https:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every page besides the CSP. */
export const WEB_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': WEB_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

export const searchUrl = (q: string, page = 1): string =>
  `${WEB_PATH}/?${new URLSearchParams({ ...(q === '' ? {} : { q }), ...(page > 1 ? { page: String(page) } : {}) }).toString()}`.replace(/\?$/, '');
export const packageUrl = (name: string): string => `${WEB_PATH}/packages/${encodeURIComponent(name)}`;

/** A whole page: the header with the search box, then `body`. */
export function layout(title: string, body: Html, query = ''): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Package registry</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="icon" type="image/svg+xml" href="${ICON_PATH}">
</head>
<body>
<header class="site">
<a class="brand" href="${WEB_PATH}/">Package registry</a>
<form class="search" role="search" method="get" action="${WEB_PATH}/">
<label for="q" class="muted">Search</label>
<input id="q" name="q" type="search" value="${query}" placeholder="Search packages" maxlength="200">
<button type="submit">Search</button>
</form>
</header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** A page for a refusal (400 bad name, 404 unknown package): what happened, and the way back. */
export function problemPage(heading: string, message: string): Html {
  return layout(heading, html`<h1>${heading}</h1><p>${message}</p><p><a href="${WEB_PATH}/">Browse every package</a></p>`);
}
