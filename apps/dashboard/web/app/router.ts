import type { Page } from './page.ts';

export const BASE = '/dashboard';

/** The path under /dashboard without slashes at either end: `/dashboard/runs/x/` -> `runs/x`. */
export function routePath(pathname: string): string {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return rest.replace(/^\/+|\/+$/g, '');
}

/** The page whose path pattern matches (`runs/:id` takes one segment), with its parameters. */
export function matchPage(pages: readonly Page[], path: string): { page: Page; params: string[] } | null {
  const segments = path === '' ? [] : path.split('/');
  for (const page of pages) {
    const pattern = page.path === '' ? [] : page.path.split('/');
    if (pattern.length !== segments.length) continue;
    const params: string[] = [];
    const matches = pattern.every((part, i) => {
      const segment = decodeURIComponent(segments[i]!);
      if (part.startsWith(':')) {
        params.push(segment);
        return segment !== '';
      }
      return part === segment;
    });
    if (matches) return { page, params };
  }
  return null;
}

/**
 * Same-document navigation for links to /dashboard/...: a plain click is handled here (history
 * entry, no reload); a click with a modifier, a middle click or a download keeps the browser's
 * own behaviour. Every page is also a real URL the server answers, so reload and bookmarks work.
 */
export function interceptLinks(navigate: (path: string) => void): void {
  document.addEventListener('click', (event) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    const link = (event.target as Element | null)?.closest('a');
    if (link === null || link === undefined || link.hasAttribute('download') || link.target !== '') return;
    // A fragment of this page (the skip link) is the browser's business: it moves the focus there.
    if (link.getAttribute('href')?.startsWith('#') === true) return;
    const url = new URL(link.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(BASE)) return;
    event.preventDefault();
    navigate(`${url.pathname}${url.search}`);
  });
}
