import type { PlatformConfig } from '@agent-platform/contracts';

/**
 * The Content-Security-Policy of every /dashboard response (docs/dashboard.md "Security"):
 * scripts, styles, images and fonts from this origin only, no inline script or style, no eval,
 * no plugin, no framing, no <base> rewrite, forms posting nowhere else. `connect-src` adds the
 * OIDC issuer's origin (discovery and the token endpoint, when `[dashboard] oidc_client_id` is
 * set in mode oidc) and `[dashboard] connect_origins`, which the config check holds to plain
 * origins, so no value from the file can add a directive.
 */
export function dashboardCsp(config: PlatformConfig): string {
  const connect = ["'self'", ...signInOrigins(config)];
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "font-src 'self'",
    `connect-src ${[...new Set(connect)].join(' ')}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Origins the browser calls to sign in through the provider; none without provider sign-in. */
function signInOrigins(config: PlatformConfig): string[] {
  if (!providerSignIn(config)) return [];
  const issuer = originOf(config.auth.oidc.issuer);
  return [
    ...(issuer === null ? [] : [issuer]),
    ...config.dashboard.connect_origins.map((o) => o.replace(/\/$/, '')),
  ];
}

/** Whether the page offers sign-in through the identity provider. */
export function providerSignIn(config: PlatformConfig): boolean {
  return config.auth.mode === 'oidc' && config.dashboard.oidc_client_id !== '';
}

function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** Headers of every dashboard response besides the CSP. */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};
