import './styles.css';
import { ApiError, createApi, describeError } from './lib/api.ts';
import { fill, h } from './lib/dom.ts';
import { CALLBACK_PATH, completeSignIn } from './lib/oidc.ts';
import {
  createSession,
  tokenStore,
  type DashboardConfig,
  type Identity,
  type Session,
} from './lib/session.ts';
import type { Page } from './app/page.ts';
import { BASE, interceptLinks, matchPage, routePath } from './app/router.ts';
import { createShell } from './app/shell.ts';
import { agentsPage } from './pages/agents.ts';
import { auditPage } from './pages/audit.ts';
import { channelsPage } from './pages/channels.ts';
import { errorBox, pageHeader } from './pages/common.ts';
import { compliancePage } from './pages/compliance.ts';
import { integrationsPage } from './pages/integrations.ts';
import { licencePage } from './pages/licence.ts';
import { overviewPage } from './pages/overview.ts';
import { runDetailPage } from './pages/run-detail.ts';
import { runsPage } from './pages/runs.ts';
import { schedulesPage } from './pages/schedules.ts';
import { renderSignIn } from './pages/sign-in.ts';
import { webhooksPage } from './pages/webhooks.ts';

/** Navigation order; the run page is reached from the runs list. */
const PAGES: readonly Page[] = [
  overviewPage,
  agentsPage,
  runsPage,
  schedulesPage,
  channelsPage,
  integrationsPage,
  webhooksPage,
  auditPage,
  licencePage,
  compliancePage,
  runDetailPage,
];
const NAVIGATION = PAGES.filter((p) => p !== runDetailPage);

async function boot(root: HTMLElement): Promise<void> {
  const response = await fetch(`${BASE}/config.json`, { credentials: 'omit', cache: 'no-store' });
  if (!response.ok) throw new Error(`the dashboard settings could not be read (${response.status})`);
  const config = (await response.json()) as DashboardConfig;
  const authDisabled = config.auth_mode === 'disabled';

  let session: Session | null = null;
  let leave: AbortController | null = null;
  let signInNotice: string | null = null;

  const shell = createShell(root, () => void signOut(null));
  const api = createApi({
    token: () => (authDisabled ? null : tokenStore.get()),
    onUnauthorized: (error) => {
      if (session !== null) void signOut(`You were signed out: ${error.message}.`);
    },
  });

  async function signIn(token: string | null): Promise<void> {
    const identity = await createApi({ token: () => token, onUnauthorized: () => undefined }).get<Identity>(
      '/auth/whoami',
    );
    if (token !== null) tokenStore.set(token);
    session = createSession(identity, config);
    shell.setIdentity(identity, authDisabled);
  }

  async function signOut(notice: string | null): Promise<void> {
    if (session !== null && notice === null) await api.post('/auth/logout').catch(() => undefined);
    tokenStore.clear();
    session = null;
    signInNotice = notice;
    shell.setIdentity(null, authDisabled);
    render(false);
  }

  function navigate(path: string): void {
    history.pushState(null, '', path);
    render(true);
  }

  function render(moveFocus: boolean): void {
    leave?.abort();
    leave = new AbortController();
    const signal = leave.signal;
    if (session === null) {
      shell.setNavigation([], null);
      document.title = 'Sign in · Agent Platform';
      renderSignIn(shell.page, {
        config,
        notice: signInNotice,
        returnTo: `${location.pathname}${location.search}`,
        signIn: async (token) => {
          await signIn(token);
          signInNotice = null;
          render(true);
        },
      });
      return;
    }
    const current = session;
    const readable = NAVIGATION.filter((p) => p.needs.some((action) => current.can(action)));
    const match = matchPage(PAGES, routePath(location.pathname));
    shell.setNavigation(readable, match?.page === runDetailPage ? runsPage : (match?.page ?? null));
    if (match === null) {
      document.title = 'Not found · Agent Platform';
      fill(
        shell.page,
        pageHeader('Page not found'),
        h(
          'p',
          null,
          'There is no such dashboard page. ',
          h('a', { href: `${BASE}/` }, 'Go to the overview'),
          '.',
        ),
      );
    } else {
      document.title = `${match.page.title} · Agent Platform`;
      if (!match.page.needs.some((action) => current.can(action))) {
        fill(
          shell.page,
          pageHeader(match.page.title),
          h('p', { class: 'notice muted' }, `Your role (${current.identity.role}) may not read this page.`),
        );
      } else {
        fill(shell.page, h('p', { class: 'muted', role: 'status' }, 'Loading…'));
        match.page
          .render({
            api,
            session: current,
            config,
            root: shell.page,
            params: match.params,
            announce: (message, kind) => shell.announce(message, kind),
            navigate,
            signal,
          })
          .then(() => moveFocus && document.getElementById('page-title')?.focus())
          .catch((error: unknown) => {
            if (!signal.aborted)
              fill(shell.page, pageHeader(match.page.title), errorBox(describeError(error)));
          });
        return;
      }
    }
    if (moveFocus) document.getElementById('page-title')?.focus();
  }

  interceptLinks(navigate);
  window.addEventListener('popstate', () => render(true));

  if (location.pathname === CALLBACK_PATH && config.oidc !== null) {
    // Back from the identity provider: trade the code for a token, then go where the person was.
    try {
      const { accessToken, returnTo } = await completeSignIn(
        config.oidc,
        new URLSearchParams(location.search),
      );
      await signIn(accessToken);
      history.replaceState(null, '', returnTo.startsWith(CALLBACK_PATH) ? `${BASE}/` : returnTo);
    } catch (error) {
      history.replaceState(null, '', `${BASE}/`);
      signInNotice = `Sign-in failed: ${describeError(error)}`;
    }
  } else {
    const saved = authDisabled ? null : tokenStore.get();
    if (authDisabled || saved !== null) {
      await signIn(saved).catch((error: unknown) => {
        tokenStore.clear();
        if (error instanceof ApiError && error.status === 401)
          signInNotice = 'Your session has ended: sign in again.';
        else signInNotice = `The platform could not check your sign-in: ${describeError(error)}`;
      });
    }
  }
  render(false);
}

const root = document.getElementById('app');
if (root !== null) {
  boot(root).catch((error: unknown) =>
    fill(
      root,
      h(
        'main',
        { id: 'main' },
        h('h1', null, 'The dashboard could not start'),
        errorBox(describeError(error)),
      ),
    ),
  );
}
