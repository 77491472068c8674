import { endpointUrlProblem } from '@agent-platform/oidc';

type Table = Record<string, unknown>;

/**
 * `[dashboard]` beyond its schema (docs/dashboard.md): each of `connect_origins` goes into the
 * page's Content-Security-Policy header, so it must be exactly an origin (scheme, host, optional
 * port; nothing a header could be bent with), https or loopback http like the issuer itself.
 * `oidc_resource` must be an absolute URI (RFC 8707 §2).
 */
export function dashboardProblems(dashboard: Table): string[] {
  const problems: string[] = [];
  const origins = dashboard.connect_origins;
  if (Array.isArray(origins)) {
    origins.forEach((value: unknown, i) => {
      if (typeof value !== 'string') return;
      const problem = originProblem(value);
      if (problem !== null)
        problems.push(`dashboard.connect_origins[${i}]: "${value.slice(0, 200)}" ${problem}`);
    });
  }
  const resource = dashboard.oidc_resource;
  if (
    typeof resource === 'string' &&
    resource !== '' &&
    (parseUrl(resource) === null || resource.includes('#'))
  ) {
    problems.push(
      `dashboard.oidc_resource: "${resource.slice(0, 200)}" is not an absolute URI without a fragment (RFC 8707)`,
    );
  }
  return problems;
}

function originProblem(value: string): string | null {
  const url = parseUrl(value);
  if (url === null || url.origin === 'null' || url.origin !== value.replace(/\/$/, '')) {
    return 'is not an origin (scheme://host[:port], e.g. "https://login.example.com")';
  }
  return endpointUrlProblem(value);
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
