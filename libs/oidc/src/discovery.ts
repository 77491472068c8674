import { fetchJson, type FetchLimits } from './bounded-fetch.ts';
import { endpointUrlProblem } from './endpoint-url.ts';

/** `<issuer>/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/**
 * The `jwks_uri` an issuer advertises. The document must name exactly the configured issuer
 * (Discovery §4.3: otherwise a document found at one issuer could vouch for keys of another),
 * and its `jwks_uri` must pass the same URL rule as a configured one.
 */
export async function discoverJwksUri(issuer: string, limits: FetchLimits): Promise<string> {
  const url = discoveryUrl(issuer);
  const document = await fetchJson(url, limits);
  if (typeof document !== 'object' || document === null) throw new Error(`${url}: not a discovery document`);
  const { issuer: advertised, jwks_uri: jwksUri } = document as { issuer?: unknown; jwks_uri?: unknown };
  if (advertised !== issuer) throw new Error(`${url}: names issuer '${String(advertised).slice(0, 200)}', not the configured '${issuer}'`);
  if (typeof jwksUri !== 'string') throw new Error(`${url}: has no jwks_uri`);
  const problem = endpointUrlProblem(jwksUri);
  if (problem !== null) throw new Error(`${url}: its jwks_uri ${problem}`);
  return jwksUri;
}
