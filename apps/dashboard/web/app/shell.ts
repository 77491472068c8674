import { fill, h } from '../lib/dom.ts';
import type { Identity } from '../lib/session.ts';
import type { Page } from './page.ts';
import { BASE } from './router.ts';

const NOTICE_MS = 5_000;
/** Notices shown at once; an older one gives way to a newer (they are read out as they come). */
const NOTICES_SHOWN = 3;

export interface Shell {
  /** Where pages render. */
  page: HTMLElement;
  /** Builds the navigation for the pages the role may read and marks the current one. */
  setNavigation(pages: readonly Page[], current: Page | null): void;
  setIdentity(identity: Identity | null, authDisabled: boolean): void;
  announce(message: string, kind?: 'info' | 'error'): void;
}

/**
 * The frame around every page: a skip link, the header with who is signed in, the navigation
 * (a list of links, the current one marked aria-current), <main>, and the notices: info in a
 * polite live region that clears itself, errors as alerts that stay until dismissed.
 */
export function createShell(root: HTMLElement, onSignOut: () => void): Shell {
  const nav = h('nav', { class: 'sidebar', 'aria-label': 'Dashboard' });
  const who = h('div', { class: 'who' });
  const signOut = h('button', { type: 'button', class: 'button secondary' }, 'Sign out');
  signOut.addEventListener('click', onSignOut);
  const page = h('div', { id: 'page' });
  const notices = h('div', { class: 'notices', role: 'status', 'aria-live': 'polite' });
  const main = h('main', { id: 'main', tabindex: -1 }, page);
  // Browsers differ on whether following a fragment link moves the focus: move it here.
  const skip = h('a', { class: 'skip-link', href: '#main' }, 'Skip to content');
  skip.addEventListener('click', (event) => {
    event.preventDefault();
    main.focus();
  });
  const alerts = h('div', { class: 'notices alerts' });
  fill(
    root,
    skip,
    h(
      'header',
      { class: 'topbar' },
      h(
        'a',
        { class: 'brand', href: `${BASE}/` },
        h('span', { class: 'logo', 'aria-hidden': 'true' }),
        'Agent Platform',
      ),
      who,
    ),
    h('div', { class: 'layout' }, nav, main),
    notices,
    alerts,
  );
  return {
    page,
    setNavigation(pages, current) {
      fill(
        nav,
        pages.length === 0
          ? null
          : h(
              'ul',
              null,
              ...pages.map((p) =>
                h(
                  'li',
                  null,
                  h(
                    'a',
                    { href: `${BASE}/${p.path}`, 'aria-current': p === current ? 'page' : null },
                    p.title,
                  ),
                ),
              ),
            ),
      );
    },
    setIdentity(identity, authDisabled) {
      if (identity === null) return fill(who);
      fill(
        who,
        authDisabled
          ? h(
              'span',
              { class: 'badge warn' },
              'Authentication is off: everyone who reaches this address is an admin',
            )
          : h(
              'span',
              null,
              'Signed in as ',
              h('strong', null, identity.identity),
              ' ',
              h('span', { class: 'badge info' }, identity.role),
            ),
        authDisabled ? null : signOut,
      );
    },
    announce(message, kind = 'info') {
      if (kind === 'error') {
        const dismiss = h('button', { type: 'button', class: 'button secondary small' }, 'Dismiss');
        const item = h('div', { class: 'notice error', role: 'alert' }, h('span', null, message), dismiss);
        dismiss.addEventListener('click', () => item.remove());
        alerts.append(item);
        return;
      }
      const item = h('div', { class: 'notice info' }, message);
      notices.append(item);
      while (notices.childElementCount > NOTICES_SHOWN) notices.firstElementChild?.remove();
      setTimeout(() => item.remove(), NOTICE_MS);
    },
  };
}
