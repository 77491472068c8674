import type { Api } from '../lib/api.ts';
import type { DashboardConfig, Session } from '../lib/session.ts';

/** What a page gets to render itself. */
export interface PageContext {
  api: Api;
  session: Session;
  config: DashboardConfig;
  /** The page's region (inside <main>); the page owns everything in it. */
  root: HTMLElement;
  /** Path parameters after the page's own path (`/runs/<id>` -> `['<id>']`). */
  params: string[];
  /** Shows a notice and says it to screen readers: politely, or at once for an error (role alert). */
  announce(message: string, kind?: 'info' | 'error'): void;
  navigate(path: string): void;
  /** Aborted when the person leaves the page: streams and timers stop with it. */
  signal: AbortSignal;
}

export interface Page {
  /** The path under /dashboard (`agents`); '' for the overview. */
  path: string;
  /** The navigation entry and the document title. */
  title: string;
  /** Actions any one of which lets a role read the page; the entry is hidden from other roles. */
  needs: readonly string[];
  render(context: PageContext): Promise<void>;
}
