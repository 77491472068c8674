import type { DashboardSettings } from '@agent-platform/contracts';

/** GET /dashboard/config.json: what the page needs to know before anyone signs in. */
export type DashboardConfig = DashboardSettings;

/** GET /auth/whoami. */
export interface Identity {
  identity: string;
  role: string;
  key_id: string | null;
}

export interface Session {
  readonly identity: Identity;
  /** Whether the role may perform the action (the api decides anyway; this only hides buttons). */
  can(action: string): boolean;
}

const TOKEN_KEY = 'agent-platform.dashboard.token';

/**
 * The bearer token lives in sessionStorage: it survives a reload of the tab and dies with it,
 * is never sent by the browser on its own (no cookie, so no cross-site request can use it), and
 * is cleared on sign-out and on any 401.
 */
export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

export function createSession(identity: Identity, config: DashboardConfig): Session {
  return {
    identity,
    can: (action) => config.permissions[action]?.includes(identity.role) ?? false,
  };
}
