import { algorithmProblems, endpointUrlProblem } from '@agent-platform/oidc';

type Table = Record<string, unknown>;

/**
 * `[auth.oidc]` beyond its schema (docs/auth.md "OIDC"): in mode oidc the issuer, audience and
 * role claim are required (one problem names every missing key); the issuer and a set `jwks_uri`
 * must be https URLs (http only on loopback) without credentials; `allowed_algorithms` must be
 * asymmetric (never `none` nor HMAC). The algorithm and URL rules apply in every mode, so that a
 * table prepared ahead of switching modes is already checked. Role values are the schema's work.
 */
export function oidcProblems(mode: unknown, oidc: Table): string[] {
  const problems: string[] = [];
  if (mode === 'oidc') {
    const missing = (['issuer', 'audience', 'role_claim'] as const).filter((key) => typeof oidc[key] !== 'string' || oidc[key].trim() === '');
    if (missing.length > 0) {
      problems.push(`auth.oidc: mode "oidc" needs ${missing.map((key) => `auth.oidc.${key}`).join(', ')} (the provider's issuer URL, the api's audience, the claim holding roles)`);
    }
  }
  for (const key of ['issuer', 'jwks_uri'] as const) {
    const value = oidc[key];
    if (typeof value !== 'string' || value === '') continue;
    const problem = endpointUrlProblem(value);
    if (problem !== null) problems.push(`auth.oidc.${key}: "${value.slice(0, 200)}" ${problem}`);
  }
  const algorithms = oidc.allowed_algorithms;
  if (Array.isArray(algorithms) && algorithms.every((alg) => typeof alg === 'string')) {
    problems.push(...algorithmProblems(algorithms).map((problem) => `auth.oidc.allowed_algorithms: ${problem}`));
  }
  return problems;
}
